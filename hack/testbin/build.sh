#!/usr/bin/env bash
# Builds the local control-plane binaries (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok), a real node's (kubelet,
# kube-proxy, containerd, runc, the CNI plugins) and the Cluster API managers
# the clusterctl tests and the demo run (capi-manager,
# capi-kubeadm-bootstrap-manager, capi-kubeadm-control-plane-manager) from Go
# modules into a cache directory outside the repository, and links the
# example site to Cluster API's provider components. A binary is rebuilt only when the wrapper module that
# pins it (go.mod + go.sum) or the Go toolchain changed.
#
# Usage: hack/testbin/build.sh            build what is missing or stale
#        hack/testbin/build.sh --print-dir print the cache directory and exit
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC1091 # versions.env sits beside this script
source "${here}/versions.env"

dir="$(bash "${here}/dir.sh")"
if [[ "${1:-}" == "--print-dir" ]]; then
  echo "${dir}"
  exit 0
fi
mkdir -p "${dir}"

export GOWORK=off GOFLAGS="${GOFLAGS:-} -trimpath"
gover="$(go env GOVERSION)"

# stamp prints a fingerprint of one wrapper module and the toolchain.
stamp() {
  cat "${here}/$1/go.mod" "${here}/$1/go.sum" <(echo "${gover}") | sha256sum | cut -d' ' -f1
}

# fresh returns 0 when every named binary exists with the module's stamp.
fresh() {
  local mod="$1"; shift
  local want; want="$(stamp "${mod}")"
  for b in "$@"; do
    [[ -x "${dir}/${b}" && -f "${dir}/.${b}.stamp" && "$(cat "${dir}/.${b}.stamp")" == "${want}" ]] || return 1
  done
}

mark() {
  local mod="$1"; shift
  local s; s="$(stamp "${mod}")"
  for b in "$@"; do echo "${s}" > "${dir}/.${b}.stamp"; done
}

log() { printf '[testbin %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

start=$SECONDS
if fresh etcd etcd; then
  log "etcd ${ETCD_VERSION}: up to date"
else
  log "etcd ${ETCD_VERSION}: building (about 1 minute cold)"
  (cd "${here}/etcd" && go build -ldflags "-s -w" -o "${dir}/etcd" go.etcd.io/etcd/server/v3)
  mark etcd etcd
  log "etcd: done"
fi

minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
ld="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld+=" -X ${pkg}.gitVersion=${KUBERNETES_VERSION}"
  ld+=" -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  ld+=" -X ${pkg}.gitTreeState=clean"
  ld+=" -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done

k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
if fresh kubernetes "${k8s_bins[@]}"; then
  log "kubernetes ${KUBERNETES_VERSION}: up to date"
else
  log "kubernetes ${KUBERNETES_VERSION}: building ${k8s_bins[*]} (about 6-10 minutes cold, 2.5 GiB memory)"
  pkgs=()
  for b in "${k8s_bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${b}"); done
  (cd "${here}/kubernetes" && go build -ldflags "${ld}" -o "${dir}/" "${pkgs[@]}")
  mark kubernetes "${k8s_bins[@]}"
  log "kubernetes: done"
fi

if fresh kwok kwok; then
  log "kwok ${KWOK_VERSION}: up to date"
else
  log "kwok ${KWOK_VERSION}: building (about 2 minutes cold)"
  (cd "${here}/kwok" && go build -ldflags "-s -w" -o "${dir}/kwok" sigs.k8s.io/kwok/cmd/kwok)
  mark kwok kwok
  log "kwok: done"
fi

# A real node's runtime (`cluster local up --real-nodes`): containerd, its
# runc shim and ctr (no btrfs: that snapshotter needs cgo headers), runc with
# seccomp (cgo and libseccomp-dev, which hack/setup.sh installs), and the CNI
# plugins the node's network configuration names.
if fresh containerd containerd containerd-shim-runc-v2 ctr; then
  log "containerd ${CONTAINERD_VERSION}: up to date"
else
  log "containerd ${CONTAINERD_VERSION}: building containerd, containerd-shim-runc-v2, ctr (about 4 minutes cold)"
  (cd "${here}/containerd" && CGO_ENABLED=0 go build -tags no_btrfs \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION}" -o "${dir}/" \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr)
  mark containerd containerd containerd-shim-runc-v2 ctr
  log "containerd: done"
fi
if fresh runc runc; then
  log "runc ${RUNC_VERSION}: up to date"
else
  log "runc ${RUNC_VERSION}: building with seccomp (about 1 minute cold)"
  (cd "${here}/runc" && CGO_ENABLED=1 go build -tags seccomp \
    -ldflags "-s -w -X main.version=${RUNC_VERSION#v}" -o "${dir}/runc" github.com/opencontainers/runc)
  mark runc runc
  log "runc: done"
fi
cni_bins=(bridge host-local loopback portmap)
if fresh cni "${cni_bins[@]}"; then
  log "CNI plugins ${CNI_PLUGINS_VERSION}: up to date"
else
  log "CNI plugins ${CNI_PLUGINS_VERSION}: building ${cni_bins[*]} (about 1 minute cold)"
  (cd "${here}/cni" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "${dir}/" \
    github.com/containernetworking/plugins/plugins/main/bridge \
    github.com/containernetworking/plugins/plugins/ipam/host-local \
    github.com/containernetworking/plugins/plugins/main/loopback \
    github.com/containernetworking/plugins/plugins/meta/portmap)
  mark cni "${cni_bins[@]}"
  log "CNI plugins: done"
fi

# Cluster API managers for the clusterctl tests (core, kubeadm bootstrap,
# kubeadm control plane), run as local processes by internal/test/capienv.
capi_bins=(capi-manager capi-kubeadm-bootstrap-manager capi-kubeadm-control-plane-manager)
capi_pkgs=(core bootstrap/kubeadm controlplane/kubeadm)
if fresh capi "${capi_bins[@]}"; then
  log "cluster-api ${CAPI_VERSION}: up to date"
else
  log "cluster-api ${CAPI_VERSION}: building ${capi_bins[*]} (about 3-4 minutes cold, 1.2 GiB memory)"
  capi_ld="-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=${CAPI_VERSION}"
  capi_ld+=" -X sigs.k8s.io/cluster-api/version.gitTreeState=clean"
  capi_ld+=" -X sigs.k8s.io/cluster-api/version.buildDate=1970-01-01T00:00:00Z"
  for i in "${!capi_bins[@]}"; do
    (cd "${here}/capi" && go build -ldflags "${capi_ld}" -o "${dir}/${capi_bins[$i]}" "sigs.k8s.io/cluster-api/${capi_pkgs[$i]}")
  done
  mark capi "${capi_bins[@]}"
  log "cluster-api: done"
fi

# kubectl is on developer machines; build one only where it is missing, for
# the end-to-end tests and the demo.
if command -v kubectl >/dev/null; then
  log "kubectl: using $(command -v kubectl)"
elif fresh kubernetes kubectl; then
  log "kubectl ${KUBERNETES_VERSION}: up to date"
else
  log "kubectl ${KUBERNETES_VERSION}: not on PATH, building (about 1 minute)"
  (cd "${here}/kubernetes" && go build -ldflags "${ld}" -o "${dir}/kubectl" k8s.io/kubernetes/cmd/kubectl)
  mark kubernetes kubectl
  log "kubectl: done"
fi

# The example site installs Cluster API's providers from the source of the
# module the managers above are built from: a git-ignored copy of its
# kustomize trees in the site (examples/site/function/capi/README.md). A
# copy, not a link: a build refuses a symbolic link that leads outside the
# site's target path.
capi_src="$(cd "${here}/capi" && go mod download -json "sigs.k8s.io/cluster-api@${CAPI_VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ ! -d "${capi_src}/core/config/default" ]]; then
  log "cluster-api ${CAPI_VERSION}: module source not found (go mod download gave '${capi_src}')"
  exit 1
fi
capi_dst="${here}/../../examples/site/function/capi/upstream"
capi_tmp="$(mktemp -d "${capi_dst}.XXXXXX")"
for d in core/config bootstrap/kubeadm/config controlplane/kubeadm/config; do
  mkdir -p "${capi_tmp}/${d}"
  cp -R "${capi_src}/${d}/." "${capi_tmp}/${d}/"
done
chmod -R u+w,go+rX "${capi_tmp}"
rm -rf "${capi_dst}"
mv "${capi_tmp}" "${capi_dst}"
log "examples/site/function/capi/upstream: Cluster API's kustomize trees from ${capi_src}"

log "all binaries in ${dir} ($((SECONDS - start)) s)"
