#!/usr/bin/env bash
# The demo: bring up the local control plane (or reuse the running one), run
# the example site's plan on it (namespaces and a CRD, then a workload that
# must become Ready and Helm charts deployed by the Armada operator), and
# show the result with kubectl.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

airshipctl=bin/airshipctl
# kubectl: the one on PATH, else the one hack/testbin/build.sh built.
PATH="${PATH}:$(bash hack/testbin/dir.sh)"
export AIRSHIPCONFIG="${PWD}/examples/site/airship-config.yaml"

"${airshipctl}" cluster local up
kubeconfig="$("${airshipctl}" cluster local status -o json | sed -n 's/.*"kubeconfig": "\(.*\)".*/\1/p' | head -1)"
# The example ClusterMap reads ~/.airship/local/kubeconfig; a cluster kept
# elsewhere is passed explicitly.
override=()
if [[ "${kubeconfig}" != "${HOME}/.airship/local/kubeconfig" ]]; then
  override=(--kubeconfig "${kubeconfig}")
fi

# The plan's armada-ephemeral phase needs the Armada operator. It runs here
# as a local process (it waits for the CRDs the phase installs); the site's
# charts/ directory stands in for the /charts volume of an in-cluster one.
oplog="${TMPDIR:-/tmp}/airship-demo-armada-operator.log"
bin/armada-operator --kubeconfig "${kubeconfig}" --chart-root examples/site/function/armada-site \
  --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0 >"${oplog}" 2>&1 &
oppid=$!
trap 'kill "${oppid}" 2>/dev/null || true' EXIT
echo "== armada-operator started (pid ${oppid}, log ${oplog})"

echo "== airshipctl phase list"
"${airshipctl}" phase list
echo "== airshipctl plan validate deploy-local"
"${airshipctl}" plan validate deploy-local
echo "== airshipctl plan run deploy-local"
"${airshipctl}" "${override[@]}" plan run deploy-local
echo "== airshipctl plan status deploy-local"
"${airshipctl}" "${override[@]}" plan status deploy-local

export KUBECONFIG="${kubeconfig}"
echo "== kubectl get nodes"
kubectl get nodes
echo "== kubectl -n airship-demo get deploy,pods,configmaps,widgets -o wide"
kubectl -n airship-demo get deploy,pods,configmaps,widgets -o wide
echo "== kubectl -n armada-site get act,acg,amf"
kubectl -n armada-site get act,acg,amf
echo "== kubectl -n demo get deploy,statefulsets,jobs"
kubectl -n demo get deploy,statefulsets,jobs

if [[ -x hack/demo-promenade.sh ]]; then
  out="${TMPDIR:-/tmp}/airship-demo-promenade"
  echo "== Promenade: site PKI and genesis/join scripts into ${out}"
  bash hack/demo-promenade.sh "${out}"
fi

echo
echo "The cluster keeps running. Use it with: export KUBECONFIG=${kubeconfig}"
echo "Stop it with: ${airshipctl} cluster local down [--purge]"
echo "The Armada operator stops with this script; to keep the charts healed, run:"
echo "  bin/armada-operator --kubeconfig ${kubeconfig} --chart-root examples/site/function/armada-site --leader-elect=false"
