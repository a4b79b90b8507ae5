#!/bin/sh
# Promenade anchor: keeps a static pod (and its files) in place on the host.
# Files come from /anchor/files (a list of "key path mode" lines naming keys
# of the mounted ConfigMap /anchor and Secret /anchor-pki). A file is written
# only when its content changed, atomically (temporary file, then rename).
# ${NODE_NAME}, ${NODE_IP} and, for etcd, ${ETCD_INITIAL_CLUSTER} and
# ${ETCD_INITIAL_CLUSTER_STATE} are substituted in files whose key ends in
# .tmpl.
set -eu

HOST_ROOT="${HOST_ROOT:-/host}"
ANCHOR_DIR="${ANCHOR_DIR:-/anchor}"
PKI_DIR="${PKI_DIR:-/anchor-pki}"
INTERVAL="${ANCHOR_INTERVAL:-15}"
READY_FILE="${READY_FILE:-/tmp/anchor-ready}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-2380}"
ETCD_INITIAL_CLUSTER="${ETCD_INITIAL_CLUSTER:-${NODE_NAME}=https://${NODE_IP}:${ETCD_PEER_PORT}}"
ETCD_INITIAL_CLUSTER_STATE="${ETCD_INITIAL_CLUSTER_STATE:-new}"

log() { echo "anchor[${ANCHOR_NAME:-?}/${NODE_NAME}]: $*"; }

# install_if_changed SRC DEST MODE
install_if_changed() {
  if [ -f "$2" ] && cmp -s "$1" "$2"; then
    return 0
  fi
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2.anchor-tmp"
  chmod "$3" "$2.anchor-tmp"
  mv "$2.anchor-tmp" "$2"
  log "updated $2"
}

render() {
  sed -e "s|\${NODE_NAME}|${NODE_NAME}|g" \
    -e "s|\${NODE_IP}|${NODE_IP}|g" \
    -e "s|\${ETCD_INITIAL_CLUSTER}|${ETCD_INITIAL_CLUSTER}|g" \
    -e "s|\${ETCD_INITIAL_CLUSTER_STATE}|${ETCD_INITIAL_CLUSTER_STATE}|g" "$1"
}

etcdctl_() {
  ETCDCTL_API=3 etcdctl --endpoints="${ETCD_ENDPOINTS}" \
    --cacert="${PKI_DIR}/etcd-ca.pem" --cert="${PKI_DIR}/anchor.pem" --key="${PKI_DIR}/anchor-key.pem" "$@"
}

# etcd_join: before this node's member is first started, add it to the
# running cluster as a learner (a non-voting member that catches up without
# affecting quorum), and start it with the cluster's member list.
etcd_join() {
  [ -n "${ETCD_ENDPOINTS:-}" ] || return 0
  manifest="${HOST_ROOT}/etc/kubernetes/manifests/kubernetes-etcd.yaml"
  [ -f "${manifest}" ] && return 0
  members=$(etcdctl_ member list) || { log "etcd cluster not reachable yet"; return 1; }
  peer="https://${NODE_IP}:${ETCD_PEER_PORT}"
  if ! echo "${members}" | grep -qF ", ${peer}, "; then
    out=$(etcdctl_ member add "${NODE_NAME}" --learner --peer-urls="${peer}") || return 1
    log "added ${NODE_NAME} to etcd as a learner"
    ETCD_INITIAL_CLUSTER=$(echo "${out}" | sed -n 's/^ETCD_INITIAL_CLUSTER="\(.*\)"$/\1/p')
  else
    # A member added but never started has no name yet.
    ETCD_INITIAL_CLUSTER=$(echo "${members}" | awk -F', ' -v n="${NODE_NAME}" -v p="${peer}" \
      '{name = $3; if (name == "" && $4 == p) name = n; if (name != "") {printf "%s%s=%s", sep, name, $4; sep = ","}}')
  fi
  ETCD_INITIAL_CLUSTER_STATE=existing
}

# etcd_promote: promote this node's learner once it has caught up (etcd
# refuses until then; the next round retries).
etcd_promote() {
  [ -n "${ETCD_ENDPOINTS:-}" ] || return 0
  id=$(etcdctl_ member list 2>/dev/null | awk -F', ' -v p="https://${NODE_IP}:${ETCD_PEER_PORT}" '$4 == p && $6 == "true" {print $1}')
  [ -n "${id}" ] || return 0
  if etcdctl_ member promote "${id}" >/dev/null 2>&1; then
    log "promoted etcd learner ${NODE_NAME}"
  fi
}

# remove_files: the anchor was told to let go (ANCHOR_REMOVE set, e.g. by the
# chart's remove value): take its files off the host, the static pod first
# so the kubelet stops it.
remove_files() {
  { grep ' /etc/kubernetes/manifests/' "${ANCHOR_DIR}/files" || true
    grep -v ' /etc/kubernetes/manifests/' "${ANCHOR_DIR}/files" || true; } | while read -r key path mode; do
    case "${key}" in
      "" | "#"*) continue ;;
    esac
    : "${mode}"
    if [ -e "${HOST_ROOT}${path}" ]; then
      rm -f "${HOST_ROOT}${path}"
      log "removed ${path}"
    fi
  done
}

sync_files() {
  tmp=$(mktemp)
  while read -r key path mode; do
    case "${key}" in
      "" | "#"*) continue ;;
    esac
    key=$(echo "${key}" | sed "s|\${NODE_NAME}|${NODE_NAME}|g")
    if [ -f "${ANCHOR_DIR}/${key}" ]; then
      src="${ANCHOR_DIR}/${key}"
    else
      src="${PKI_DIR}/${key}"
    fi
    case "${key}" in
      *.tmpl) render "${src}" >"${tmp}" ;;
      *) cp "${src}" "${tmp}" ;;
    esac
    install_if_changed "${tmp}" "${HOST_ROOT}${path}" "${mode}"
  done <"${ANCHOR_DIR}/files"
  rm -f "${tmp}"
}

trap 'log "stopping"; exit 0' TERM INT
anchor_round() {
  if [ -n "${ANCHOR_REMOVE:-}" ]; then
    remove_files
    touch "${READY_FILE}"
    return 0
  fi
  if [ "${ANCHOR_NAME:-}" = etcd ]; then
    etcd_join || true
  fi
  if [ "${ANCHOR_NAME:-}" != etcd ] || [ -z "${ETCD_ENDPOINTS:-}" ] || [ "${ETCD_INITIAL_CLUSTER_STATE}" = existing ] || [ -f "${HOST_ROOT}/etc/kubernetes/manifests/kubernetes-etcd.yaml" ]; then
    sync_files
    touch "${READY_FILE}"
  fi
  if [ "${ANCHOR_NAME:-}" = etcd ]; then
    etcd_promote || true
  fi
}

while :; do
  anchor_round
  if [ -n "${ANCHOR_ONCE:-}" ]; then
    exit 0
  fi
  sleep "${INTERVAL}" &
  wait $!
done
