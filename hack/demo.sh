#!/usr/bin/env bash
# The demo: bring up the local control plane (or reuse the running one), run
# the example site's plan on it (namespaces and a CRD, then a workload that
# must become Ready), and show the result with kubectl.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

airshipctl=bin/airshipctl
export AIRSHIPCONFIG="${PWD}/examples/site/airship-config.yaml"

"${airshipctl}" cluster local up
kubeconfig="$("${airshipctl}" cluster local status -o json | sed -n 's/.*"kubeconfig": "\(.*\)".*/\1/p' | head -1)"
# The example ClusterMap reads ~/.airship/local/kubeconfig; a cluster kept
# elsewhere is passed explicitly.
override=()
if [[ "${kubeconfig}" != "${HOME}/.airship/local/kubeconfig" ]]; then
  override=(--kubeconfig "${kubeconfig}")
fi

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

if [[ -x hack/demo-promenade.sh ]]; then
  out="${TMPDIR:-/tmp}/airship-demo-promenade"
  echo "== Promenade: site PKI and genesis/join scripts into ${out}"
  bash hack/demo-promenade.sh "${out}"
fi

echo
echo "The cluster keeps running. Use it with: export KUBECONFIG=${kubeconfig}"
echo "Stop it with: ${airshipctl} cluster local down [--purge]"
