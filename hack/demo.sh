#!/usr/bin/env bash
# The demo: two local control planes, the ephemeral cluster and the target
# cluster, then the example site's plan: on the ephemeral one namespaces and
# CRDs, a workload, Helm charts deployed by the Armada operator, Cluster API
# with this project's bare-metal provider, the site's hosts served by the
# Redfish emulator, the hosts SIP picks for the target cluster, and that
# cluster's control plane and workers provisioned on them through Ironic
# (the site's image and a config drive written to the hosts' disks), their
# Nodes joining the target cluster, Promenade's core-component charts
# deployed onto them through Armada, the pivot, after which the target
# cluster's metal3-operator and Ironic adopt the provisioned hosts without
# touching them, and the site's charts deployed into the target cluster.
#
# The target cluster has one real node (a kubelet and containerd built
# from Go modules, on this host; `make demo` needs root for it), on which
# its operators run as pods from the images `make images` built, installed
# from charts/airship-operators: armada-operator deploys Promenade's core
# charts and the site's charts, metal3-operator adopts and then manages the
# moved hosts through the target cluster's Ironic, sip-operator serves the
# moved SIPCluster, whose control-plane load balancer (sip-target) runs as
# a real HAProxy pod there. The node is tainted so that only those pods
# land on it; every other pod (the site's charts, whose images no node here
# has) runs on kwok's Nodes. What stays a local process: the ephemeral
# cluster's operators (kwok runs no containers there), Cluster API's
# managers of both clusters (built from Cluster API's module, no image),
# the two Ironics (Debian's Python Ironic; the target one listens on the
# nodes' bridge, 10.88.0.1, with HTTP basic authentication, so the
# metal3-operator pod reaches it) and the Redfish emulator, which plays
# the hosts. They keep running after this script returns, like the two
# clusters, so that the site goes on reconciling (power a host off, edit a
# BareMetalHost or an ArmadaChart's values, and watch); `make demo-down`
# stops them, and a second `make demo` replaces them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ "$(id -u)" != 0 ]]; then
  echo "make demo starts a real node (a kubelet and containerd) for the target cluster, which needs root: run it as root (sudo -E make demo)" >&2
  exit 1
fi

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
# Logs, the render cache, Promenade's output, the two Ironics' state
# directories and the hosts' disks; `make demo-down` removes this directory
# and the two clusters' state directories, and nothing else.
logs="${TMPDIR:-/tmp}/airship-demo"
# The ephemeral cluster's Ironic (API 127.0.0.1:6385, image server
# 127.0.0.1:6180, which also serves the site's node image: the URL of
# examples/site/function/k8scontrol and workers) and the target cluster's
# (10.88.0.1:6386 and 6181, on the target cluster's nodes' bridge), which
# takes the provisioned hosts over after the pivot.
ironic_dir="${logs}/ironic"
ironic_target_dir="${logs}/ironic-target"
# The emulated hosts' disks, sparse files (<host>/<disk>.img).
disks="${logs}/disks"
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
# One real node, tainted: only the pods that tolerate the taint (the
# operators, SIP's control-plane load balancer) run there.
real_node_taint=airshipit.org/real-node=true:NoSchedule
phase "target cluster (${target_dir}, API server on 127.0.0.1:16443, the site PKI's kubernetes CA, one real node)"
"${airshipctl}" cluster local up --state-dir "${target_dir}" --port 16443 --nodes 1 --ca-cert "${ca[0]}" --ca-key "${ca[1]}" \
  --real-nodes 1 --images bin/images --real-node-taint "${real_node_taint}"

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

# The two Ironics, in the background until `make demo-down` (localironic
# records their processes in each state directory's state.json, not in
# ${logs}/pids). Their power sync reads every host's power state every
# 10 s; neither forces it back (the BareMetalHost controller owns it).
# The target cluster's listens on the nodes' bridge (10.88.0.1, this host's
# address there) with HTTP basic authentication: its metal3-operator runs
# as a pod.
target_ironic=10.88.0.1
phase "two local Ironics: the ephemeral cluster's on 127.0.0.1:6385, the target cluster's on ${target_ironic}:6386"
ironic_up() {
  local dir="$1" api="$2" http="$3"; shift 3
  "${airshipctl}" ironic local up --state-dir "${dir}" --api-port "${api}" --http-port "${http}" --sync-power-state-interval 10s "$@"
}
ironic_up "${ironic_dir}" 6385 6180 >"${logs}/ironic-up.out" 2>&1 &
up_ephemeral=$!
ironic_up "${ironic_target_dir}" 6386 6181 --host "${target_ironic}" --auth http_basic >"${logs}/ironic-target-up.out" 2>&1 &
up_target=$!
status=0
wait "${up_ephemeral}" || status=1
wait "${up_target}" || status=1
cat "${logs}/ironic-up.out" "${logs}/ironic-target-up.out"
((status == 0)) || { echo "a local Ironic did not start"; exit 1; }
# The site's node image, served by the ephemeral Ironic's image server
# with its sha256sum file: a small GPT disk as qcow2 (hack/site-image). The
# conductor downloads it, checks it against the checksum file and converts
# it to raw; the hosts' deploy agent writes it and a config drive.
go build -o bin/site-image ./hack/site-image
bin/site-image --out "${ironic_dir}/http/images/site-node.qcow2"
ironic_flags=(--ironic-endpoint http://127.0.0.1:6385 --deploy-iso http://127.0.0.1:6180/deploy.iso --provision-poll-interval=2s)

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
# Their disks are sparse files under ${disks}, kept across runs.
# A booted control-plane host serves its API server port (6443 on its
# address, which the emulator adds to lo) as the real server would: the
# emulator forwards it to the API server its user-data names, so SIP's
# control-plane load balancer has a live backend.
start redfish-emulator serving bin/redfish-emulator --config examples/site/function/hosts/emulator.yaml \
  --listen 127.0.0.1:8000 --target-kubeconfig "${kubeconfig}" --state-dir "${disks}" --host-api-servers
# Every controller: BareMetalHosts, and the Cluster API provider once
# Cluster API's CRDs are in.
# metal3-operator's BareMetalHost controller drives the ephemeral Ironic;
# it also serves the conversion webhook of the infrastructure kinds
# (v1beta1 and v1beta2), which it points the ephemeral CRDs at.
start metal3-operator "" bin/metal3-operator "${local_flags[@]}" --power-poll-interval=10s "${ironic_flags[@]}" \
  --conversion-webhook-bind-address=127.0.0.1:9443 --conversion-webhook-url=https://127.0.0.1:9443
start sip-operator "" bin/sip-operator "${local_flags[@]}"
# The site's dashboard, read-only, on a free loopback port: watch the plan
# deploy the site (its phases, hosts, charts and clusters change live).
start dashboard "listening on" "${airshipctl}" dashboard --listen 127.0.0.1:0 --promenade-dir examples/site/promenade
dashboard_url="$(sed -n 's/.* listening on \(http[^ ]*\) .*/\1/p' "${logs}/dashboard.log" | head -1)"
echo "the site's dashboard: ${dashboard_url}"
# The target cluster's own operators, as pods on its real node: after the
# pivot (clusterctl-move) it manages its machines, hosts and SIPCluster
# itself; its Armada operator deploys Promenade's core-component charts
# (core-charts-target, read at /opt/promenade/charts, a volume of the
# repository's charts/promenade) and the workload-target phase's charts
# (its /charts volume: the site's charts). Cluster API's managers stay
# local processes.
start capi-managers-target "" bin/capi-managers --kubeconfig "${target_dir}/kubeconfig" --log-dir "${logs}/target"
phase "the target cluster's operators as pods on its real node (charts/airship-operators, the images of make images by digest)"
target_kubectl=(kubectl --kubeconfig "${target_dir}/kubeconfig")
# armada-operator's pod runs as a user of its own (uid 65532) and reads the
# charts through hostPath volumes of this repository: every directory above
# them must let other users through.
d="${PWD}"
while [[ "${d}" != / ]]; do
  if ! (( 8#$(stat -c %a "${d}") & 1 )); then
    echo "the operator pods cannot read the charts in ${PWD}: ${d} does not let other users through (chmod o+x ${d}, or clone the repository elsewhere)" >&2
    exit 1
  fi
  d="$(dirname "${d}")"
done
toleration="{key: ${real_node_taint%%=*}, operator: Exists, effect: NoSchedule}"
cat >"${logs}/operators-values.yaml" <<EOF
install:
  promenade: false
armada:
  nodeSelector: {airshipit.org/real-node: "true"}
  tolerations: [${toleration}]
  chartsVolume:
    hostPath: {path: "${PWD}/examples/site/function/armada-site/charts", type: Directory}
  extraVolumes:
  - {name: promenade-charts, hostPath: {path: "${PWD}/charts/promenade", type: Directory}}
  extraVolumeMounts:
  - {name: promenade-charts, mountPath: /opt/promenade/charts, readOnly: true}
  extraArgs: [--chart-mount=/opt/promenade/charts=/opt/promenade/charts]
sip:
  nodeSelector: {airshipit.org/real-node: "true"}
  tolerations: [${toleration}]
metal3:
  nodeSelector: {airshipit.org/real-node: "true"}
  tolerations: [${toleration}]
  extraArgs:
  - --ironic-endpoint=http://${target_ironic}:6386
  - --deploy-iso=http://${target_ironic}:6181/deploy.iso
  - --deploy-kernel=
  - --deploy-ramdisk=
  - --provision-poll-interval=2s
  - --power-poll-interval=10s
EOF
go build -o bin/install-operators ./hack/install-operators
bin/install-operators --kubeconfig "${target_dir}/kubeconfig" --images bin/images --values "${logs}/operators-values.yaml"
# The target Ironic's credentials, and the CA bundle the chart mounts (the
# site's kubernetes CA: the target Ironic serves plain HTTP on the bridge,
# so none is used).
"${target_kubectl[@]}" -n metal3-system create secret generic ironic-credentials \
  --from-file=credentials.yaml="${ironic_target_dir}/credentials.yaml" --dry-run=client -o yaml | "${target_kubectl[@]}" apply -f -
"${target_kubectl[@]}" -n metal3-system create secret generic ironic-cacert \
  --from-file=ca.crt="${ca[0]}" --dry-run=client -o yaml | "${target_kubectl[@]}" apply -f -
# armada-operator and sip-operator are ready now; metal3-operator once
# clusterctl-init-target has installed Cluster API's CRDs (its pod runs,
# not ready, until then).
for d in armada-system/armada-operator sip-system/sip-operator; do
  "${target_kubectl[@]}" -n "${d%/*}" rollout status "deployment/${d#*/}" --timeout=3m
done

phase "airshipctl plan validate deploy-local"
"${airshipctl}" plan validate deploy-local
phase "airshipctl plan run deploy-local"
"${airshipctl}" plan run deploy-local
phase "airshipctl plan status deploy-local"
"${airshipctl}" plan status deploy-local

# The pivot handed the provisioned hosts to the target cluster's
# metal3-operator, whose Ironic had never seen them: it adopts them (its
# own node, active, the host's image) and sends nothing to the hosts.
# Waits until each provisioned host's status names an active node of the
# target Ironic and the host booted its disk (and every unclaimed host is
# available again: those moved without a status, so the target Ironic
# enrolls, inspects and cleans them anew), then reads the emulator's
# log: each host booted its disk once (after the deploy; on a later run,
# when the target cluster powered it on again, the restarted emulator's
# hosts being off) and was sent no power, boot or media request since; a
# reprovision or a power cycle after the pivot fails here.
phase "the pivot: the target cluster's Ironic adopted the provisioned hosts, which nobody touched since they booted"
export KUBECONFIG="${target_dir}/kubeconfig"
# The target Ironic's credentials go to curl on a file descriptor, never on
# its command line.
ironic_node() {
  curl -fsS --max-time 10 -K <(awk '/^username:/{u=$2} /^password:/{p=$2} END{printf "user = \"%s:%s\"\n", u, p}' "${ironic_target_dir}/credentials.yaml") \
    -H 'X-OpenStack-Ironic-API-Version: 1.82' "http://${target_ironic}:6386/v1/nodes/$1?fields=name,provision_state,power_state" 2>/dev/null || true
}
adopted=""
for _ in $(seq 150); do
  hosts=$(kubectl -n metal3 get bmh -o jsonpath='{range .items[*]}{.metadata.name}={.spec.consumerRef.name}={.status.provisioning.state}={.status.provisioning.ID}{"\n"}{end}')
  adopted=yes
  while IFS='=' read -r host consumer state id; do
    [[ -n "${host}" ]] || continue
    if [[ -z "${consumer}" ]]; then
      [[ "${state}" == available ]] || adopted=""
      continue
    fi
    if [[ "${state}" != provisioned ]] || [[ "$(ironic_node "${id}" | jq -r .provision_state)" != active ]] ||
      ! grep -q "^redfish-emulator: ${host}: booted from Hdd" "${logs}/redfish-emulator.log"; then
      adopted=""
    fi
  done <<<"${hosts}"
  [[ -n "${adopted}" ]] && break
  sleep 2
done
if [[ -z "${adopted}" ]]; then
  echo "the target cluster's hosts were not all provisioned, adopted by its Ironic and booted, or available, within 5 minutes:"
  printf '%s\n' "${hosts}"
  exit 1
fi
untouched=0
while IFS='=' read -r host consumer _ id; do
  [[ -n "${host}" && -n "${consumer}" ]] || continue
  lines=$(grep -F "redfish-emulator: ${host}: " "${logs}/redfish-emulator.log" || true)
  boots=$(grep -c ": booted from Hdd" <<<"${lines}" || true)
  since=$(sed -n '/: booted from Hdd/,$p' <<<"${lines}" | tail -n +2 | grep -E ": (power on|power off|media inserted|media ejected|boot override)" || true)
  node=$(ironic_node "${id}" | jq -r '"\(.name) \(.provision_state), \(.power_state)"')
  if [[ "${boots}" != 1 || -n "${since}" ]]; then
    echo "${host} (${consumer}): booted its disk ${boots} times since the emulator started; after its first boot:"
    printf '%s\n' "${since}"
    untouched=1
    continue
  fi
  echo "${host} (${consumer}): target Ironic node ${node}; booted its disk once, nothing sent to it since"
done <<<"${hosts}"
((untouched == 0)) || { echo "the pivot touched a provisioned host (see ${logs}/redfish-emulator.log)"; exit 1; }

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
# The operators and the SIPCluster's control-plane load balancer, real pods
# on the real node (every other pod here runs on a kwok Node).
kubectl get pods -A -o wide --field-selector spec.nodeName=airship-node-1
# The target cluster through SIP's control-plane load balancer (node port
# 30443 of the real node), HAProxy in front of the control-plane host's
# API server port; the API server's certificate names "kubernetes".
lb="https://$(kubectl get node airship-node-1 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}'):30443"
phase "the target cluster through SIP's load balancer, ${lb}"
for i in $(seq 30); do
  kubectl --server "${lb}" --tls-server-name kubernetes --request-timeout 5s get nodes && break
  ((i < 30)) || { echo "the target cluster does not answer through SIP's load balancer at ${lb}"; exit 1; }
  sleep 2
done

unset KUBECONFIG

phase "Promenade's node scripts from the site PKI (${PROMENADE_OUTPUT_DIR}/scripts)"
ls "${PROMENADE_OUTPUT_DIR}/scripts"

cat <<EOF

The site's dashboard (read-only; its log in ${logs}/dashboard.log):
  ${dashboard_url}

Both clusters keep running. Look at them with:
  export AIRSHIPCONFIG=${AIRSHIPCONFIG} AIRSHIP_PHASE_STATE_DIR=${AIRSHIP_PHASE_STATE_DIR} \\
    PROMENADE_OUTPUT_DIR=${PROMENADE_OUTPUT_DIR} AIRSHIP_RENDER_CACHE_DIR=${AIRSHIP_RENDER_CACHE_DIR}
  ${airshipctl} plan status deploy-local
  ${airshipctl} plan run deploy-local   # again: what is unchanged is left alone
  KUBECONFIG=${target_dir}/kubeconfig kubectl get machines,bmh,sipclusters,act -A
  KUBECONFIG=${target_dir}/kubeconfig kubectl get nodes
  KUBECONFIG=${target_dir}/kubeconfig kubectl get pods -A -o wide --field-selector spec.nodeName=airship-node-1
  KUBECONFIG=${target_dir}/kubeconfig kubectl --server ${lb} --tls-server-name kubernetes get nodes
  KUBECONFIG=${kubeconfig} kubectl get act -A
Stop them and remove what the demo wrote (${ephemeral_dir},
${target_dir}, ${logs}) with:
  make demo-down
The operators (the target cluster's as pods on its real node, their logs
with kubectl logs), Cluster API's managers, the two Ironics and the Redfish
emulator keep running too (the local processes' logs are in ${logs}, the
Ironics' in ${ironic_dir}/logs and ${ironic_target_dir}/logs, the hosts'
disks in ${disks}): power a host off, edit a BareMetalHost or an
ArmadaChart's values and watch the site put it right.
EOF
