#!/usr/bin/env bash
# The demo: bring up the local control plane (or reuse the running one), run
# the example site's plan on it (namespaces and a CRD, then a workload that
# must become Ready, Helm charts deployed by the Armada operator, and
# bare-metal hosts served by the Redfish emulator that metal3-operator takes
# to available, and a tenant cluster sip-operator picks hosts for), and show
# the result with kubectl and airshipctl.
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
pids=("${oppid}")
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
echo "== armada-operator started (pid ${oppid}, log ${oplog})"

# The hosts-ephemeral phase registers the site's bare-metal hosts: the
# Redfish BMC emulator serves them at the address their BareMetalHosts name
# (127.0.0.1:8000, see examples/site/function/hosts/emulator.yaml), and
# metal3-operator, a local process like the Armada operator, drives them
# through it. Hosts that boot an image become kwok Nodes of the cluster.
emulog="${TMPDIR:-/tmp}/airship-demo-redfish-emulator.log"
bin/redfish-emulator --config examples/site/function/hosts/emulator.yaml --listen 127.0.0.1:8000 \
  --target-kubeconfig "${kubeconfig}" >"${emulog}" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  grep -q 'serving' "${emulog}" && break
  kill -0 "${pids[-1]}" 2>/dev/null || { cat "${emulog}"; echo "redfish-emulator did not start (is 127.0.0.1:8000 in use?)"; exit 1; }
  sleep 0.1
done
echo "== $(head -1 "${emulog}") (pid ${pids[-1]}, log ${emulog})"
m3log="${TMPDIR:-/tmp}/airship-demo-metal3-operator.log"
bin/metal3-operator --kubeconfig "${kubeconfig}" --leader-elect=false --metrics-bind-address=0 \
  --health-probe-bind-address=0 --power-poll-interval=10s --controllers=baremetalhost >"${m3log}" 2>&1 &
pids+=($!)
echo "== metal3-operator started (pid ${pids[-1]}, log ${m3log})"
# The sip-ephemeral phase needs sip-operator: it picks the tenant cluster's
# hosts among them, labels them and runs its load balancers.
siplog="${TMPDIR:-/tmp}/airship-demo-sip-operator.log"
bin/sip-operator --kubeconfig "${kubeconfig}" --leader-elect=false --metrics-bind-address=0 \
  --health-probe-bind-address=0 >"${siplog}" 2>&1 &
pids+=($!)
echo "== sip-operator started (pid ${pids[-1]}, log ${siplog})"

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
echo "== kubectl -n metal3 get baremetalhosts -L sip.airshipit.org/cluster-name,sip.airshipit.org/node-type,sip.airshipit.org/standby"
kubectl -n metal3 get baremetalhosts -L sip.airshipit.org/cluster-name,sip.airshipit.org/node-type,sip.airshipit.org/standby
echo "== kubectl get sipclusters -A; kubectl -n tenant-1 get deploy,services"
kubectl get sipclusters -A
kubectl -n tenant-1 get deploy,services
echo "== airshipctl baremetal powerstatus -n metal3"
"${airshipctl}" "${override[@]}" baremetal --cluster ephemeral-cluster powerstatus -n metal3

if [[ -x hack/demo-promenade.sh ]]; then
  out="${TMPDIR:-/tmp}/airship-demo-promenade"
  echo "== Promenade: site PKI and genesis/join scripts into ${out}"
  bash hack/demo-promenade.sh "${out}"
fi

echo
echo "The cluster keeps running. Use it with: export KUBECONFIG=${kubeconfig}"
echo "Stop it with: ${airshipctl} cluster local down [--purge]"
echo "The Armada operator, metal3-operator, sip-operator and the Redfish emulator stop with this"
echo "script; to keep the charts healed and the hosts managed, run:"
echo "  bin/armada-operator --kubeconfig ${kubeconfig} --chart-root examples/site/function/armada-site --leader-elect=false"
echo "  bin/redfish-emulator --config examples/site/function/hosts/emulator.yaml --target-kubeconfig ${kubeconfig}"
echo "  bin/metal3-operator --kubeconfig ${kubeconfig} --controllers=baremetalhost --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0"
echo "  bin/sip-operator --kubeconfig ${kubeconfig} --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0"
