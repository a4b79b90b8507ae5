#!/usr/bin/env bash
# The demo: two local control planes, the ephemeral cluster and the target
# cluster, then the example site's plan: on the ephemeral one namespaces and
# CRDs, a workload, Helm charts deployed by the Armada operator, Cluster API
# with this project's bare-metal provider, the site's hosts served by the
# Redfish emulator, the hosts SIP picks for the target cluster, and that
# cluster's control plane and workers provisioned on them through Redfish,
# their Nodes joining the target cluster, Promenade's core-component charts
# deployed onto them through Armada, and the site's charts deployed into it.
#
# kwok runs no containers, so the operators the site's manifests deploy as
# Deployments run here as local processes this script starts. They keep
# running after it returns, like the two clusters, so that the site goes on
# reconciling (power a host off, edit a BareMetalHost, and watch); `make
# demo-down` stops them, and a second `make demo` replaces them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

airshipctl=bin/airshipctl
# kubectl: the one on PATH, else the one hack/testbin/build.sh built.
PATH="${PATH}:$(bash hack/testbin/dir.sh)"
export AIRSHIPCONFIG="${PWD}/examples/site/airship-config.yaml"
# The example ClusterMap reads the clusters' kubeconfigs from these two
# state directories.
unset AIRSHIP_LOCAL_STATE_DIR KUBECONFIG
ephemeral_dir="${HOME}/.airship/local"
target_dir="${HOME}/.airship/local-target"
kubeconfig="${ephemeral_dir}/kubeconfig"
# Logs, the render cache and Promenade's output; `make demo-down` removes
# this directory and the two state directories, and nothing else.
logs="${TMPDIR:-/tmp}/airship-demo"
mkdir -p "${logs}"
export AIRSHIP_RENDER_CACHE_DIR="${logs}/render-cache"
# What the site-pki phase's last run did (its script changes nothing a
# cluster could report).
export AIRSHIP_PHASE_STATE_DIR="${logs}/phase-state"

phase() { printf '\n== [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

phase "ephemeral cluster (${ephemeral_dir})"
"${airshipctl}" cluster local up --state-dir "${ephemeral_dir}"

# The plan's first phase: the site PKI and node scripts from the site's
# Promenade documents (kept in ${PROMENADE_OUTPUT_DIR}, reused on later
# runs), and the target cluster's CA from it as the Secret
# metal3/tenant-1-ca that Cluster API signs the target cluster's bootstrap
# data and kubeconfig with. It runs first on its own because the target
# cluster's control plane, which stands in for the one the machines would
# start, must trust that CA.
export PROMENADE_OUTPUT_DIR="${logs}/promenade"
phase "airshipctl phase run site-pki (the site PKI into ${PROMENADE_OUTPUT_DIR})"
"${airshipctl}" phase run site-pki
ca=("${PROMENADE_OUTPUT_DIR}/pki/ca-kubernetes.pem" "${PROMENADE_OUTPUT_DIR}/pki/ca-kubernetes-key.pem")
phase "target cluster (${target_dir}, API server on 127.0.0.1:16443, the site PKI's kubernetes CA)"
"${airshipctl}" cluster local up --state-dir "${target_dir}" --port 16443 --nodes 1 --ca-cert "${ca[0]}" --ca-key "${ca[1]}"

# The local processes, listed in ${logs}/pids for `make demo-down`. Those
# of an earlier run are stopped first: this run starts its own.
bash hack/demo-down.sh --processes
pids=()
: >"${logs}/pids"
# start NAME READY-LINE COMMAND...: runs COMMAND in the background with its
# output in ${logs}/NAME.log and waits for READY-LINE (none when empty).
start() {
  local name="$1" ready="$2"; shift 2
  local log="${logs}/${name}.log"
  "$@" >"${log}" 2>&1 &
  pids+=($!)
  echo "$! $1" >>"${logs}/pids"
  if [[ -n "${ready}" ]]; then
    for _ in $(seq 100); do
      grep -q "${ready}" "${log}" && break
      kill -0 "${pids[-1]}" 2>/dev/null || { cat "${log}"; echo "${name} exited"; exit 1; }
      sleep 0.1
    done
  fi
  echo "${name} started (pid ${pids[-1]}, log ${log})"
}
local_flags=(--kubeconfig "${kubeconfig}" --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0)

phase "local processes in place of the site's Deployments"
go build -o bin/capi-managers ./hack/capi-managers
# The site's charts/ directory stands in for an in-cluster operator's /charts volume.
start armada-operator "" bin/armada-operator "${local_flags[@]}" --chart-root examples/site/function/armada-site
# Cluster API's core and kubeadm managers, once clusterctl-init-ephemeral
# installed their providers.
start capi-managers "" bin/capi-managers --kubeconfig "${kubeconfig}" --log-dir "${logs}"
# The site's hosts at the BMC address their BareMetalHosts name
# (127.0.0.1:8000, see examples/site/function/hosts/emulator.yaml). A host
# booted with Cluster API's user-data registers as a Node of the cluster
# the user-data names; anything else becomes a Node of the ephemeral cluster.
start redfish-emulator serving bin/redfish-emulator --config examples/site/function/hosts/emulator.yaml \
  --listen 127.0.0.1:8000 --target-kubeconfig "${kubeconfig}"
# Every controller: BareMetalHosts, and the Cluster API provider once
# Cluster API's CRDs are in.
start metal3-operator "" bin/metal3-operator "${local_flags[@]}" --power-poll-interval=10s
start sip-operator "" bin/sip-operator "${local_flags[@]}"
# The target cluster's own operators: after the pivot (clusterctl-move) it
# manages its machines, hosts and SIPCluster itself; its Armada operator
# deploys Promenade's core-component charts (core-charts-target, read at
# /opt/promenade/charts as if it were the volume of an in-cluster operator)
# and the workload-target phase's charts.
target_flags=(--kubeconfig "${target_dir}/kubeconfig" --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0)
start capi-managers-target "" bin/capi-managers --kubeconfig "${target_dir}/kubeconfig" --log-dir "${logs}/target"
start metal3-operator-target "" bin/metal3-operator "${target_flags[@]}" --power-poll-interval=10s
start sip-operator-target "" bin/sip-operator "${target_flags[@]}"
start armada-operator-target "" bin/armada-operator "${target_flags[@]}" --chart-root examples/site/function/armada-site \
  --chart-mount /opt/promenade/charts=charts/promenade

phase "airshipctl plan validate deploy-local"
"${airshipctl}" plan validate deploy-local
phase "airshipctl plan run deploy-local"
"${airshipctl}" plan run deploy-local
phase "airshipctl plan status deploy-local"
"${airshipctl}" plan status deploy-local

export KUBECONFIG="${kubeconfig}"
phase "the ephemeral cluster"
kubectl -n airship-demo get deploy,widgets
kubectl -n armada-site get act,acg,amf
# The hosts, machines and SIPCluster left with the pivot; their namespaces
# say where to.
kubectl get namespace metal3 tenant-1 -o custom-columns='NAMESPACE:.metadata.name,MOVED-TO:.metadata.annotations.airshipit\.org/moved-to'
phase "the target cluster, which manages itself since the pivot"
export KUBECONFIG="${target_dir}/kubeconfig"
kubectl get nodes -L metal3.io/uuid
kubectl -n metal3 get clusters,machines,metal3machines
kubectl -n metal3 get baremetalhosts -L sip.airshipit.org/cluster-name,sip.airshipit.org/node-type
kubectl get sipclusters -A
kubectl -n armada-site get act,amf
# Promenade's core components, each anchor on the Nodes labelled for it.
kubectl -n kube-system get act,amf
kubectl -n kube-system get daemonsets,deployments
unset KUBECONFIG

phase "Promenade's node scripts from the site PKI (${PROMENADE_OUTPUT_DIR}/scripts)"
ls "${PROMENADE_OUTPUT_DIR}/scripts"

cat <<EOF

Both clusters keep running. Look at them with:
  export AIRSHIPCONFIG=${AIRSHIPCONFIG} AIRSHIP_PHASE_STATE_DIR=${AIRSHIP_PHASE_STATE_DIR}
  ${airshipctl} plan status deploy-local
  KUBECONFIG=${target_dir}/kubeconfig kubectl get machines,bmh,sipclusters,act -A
  KUBECONFIG=${target_dir}/kubeconfig kubectl get nodes
  KUBECONFIG=${kubeconfig} kubectl get act -A
Stop them and remove what the demo wrote (${ephemeral_dir},
${target_dir}, ${logs}) with:
  make demo-down
The operators, Cluster API's managers and the Redfish emulator keep running
too (their logs are in ${logs}): power a host off or edit a BareMetalHost
and watch the site put it right.
EOF
