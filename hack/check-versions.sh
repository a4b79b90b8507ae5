#!/usr/bin/env bash
# Fails when go.mod requires one of the libraries ../shared/DESIGN.md pins at
# another version (a library not yet required is fine: whoever adds it must
# add it at the pinned version), or when hack/tools/go.mod's tools are not
# at theirs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pins=(
  "k8s.io/api v0.37.2"
  "k8s.io/apimachinery v0.37.2"
  "k8s.io/client-go v0.37.2"
  "k8s.io/apiextensions-apiserver v0.37.2"
  "k8s.io/cluster-bootstrap v0.37.2"
  "k8s.io/cli-runtime v0.37.2"
  "k8s.io/kubectl v0.37.2"
  "k8s.io/component-helpers v0.37.2"
  "k8s.io/component-base v0.37.2"
  "sigs.k8s.io/controller-runtime v0.25.2"
  "sigs.k8s.io/controller-tools v0.23.0"
  "sigs.k8s.io/cluster-api v1.14.2"
  "sigs.k8s.io/cluster-api/api v1.14.2"
  "helm.sh/helm/v4 v4.3.1"
  "sigs.k8s.io/kustomize/api v0.21.2"
  "sigs.k8s.io/kustomize/kyaml v0.21.2"
  "github.com/fluxcd/pkg/ssa v0.78.0"
  "github.com/fluxcd/cli-utils v1.3.0"
  "github.com/metal3-io/baremetal-operator/apis v0.13.2"
  "github.com/stmcginnis/gofish v0.26.0"
  "github.com/spf13/cobra v1.10.2"
  "github.com/getsops/sops/v3 v3.13.3"
)

bad=0
for pin in "${pins[@]}"; do
  mod="${pin% *}"; want="${pin#* }"
  have="$(go list -m -f '{{.Version}}' "${mod}" 2>/dev/null || true)"
  if [[ -n "${have}" && "${have}" != "${want}" ]]; then
    echo "${mod} is at ${have}; DESIGN.md pins ${want}"
    bad=1
  fi
done

# Tools module (hack/tools): these must be there, at these versions.
tool_pins=(
  "github.com/golangci/golangci-lint/v2 v2.15.0"
)
for pin in "${tool_pins[@]}"; do
  mod="${pin% *}"; want="${pin#* }"
  have="$(GOWORK=off go -C hack/tools list -m -f '{{.Version}}' "${mod}" 2>/dev/null || true)"
  if [[ "${have}" != "${want}" ]]; then
    echo "hack/tools: ${mod} is at ${have:-nothing}; pinned at ${want}"
    bad=1
  fi
done
# The testbin wrapper modules build what hack/testbin/versions.env names.
# shellcheck disable=SC1091 # versions.env is in the repository
source hack/testbin/versions.env
testbin_pins=(
  "kubernetes k8s.io/kubernetes ${KUBERNETES_VERSION}"
  "etcd go.etcd.io/etcd/server/v3 ${ETCD_VERSION}"
  "kwok sigs.k8s.io/kwok ${KWOK_VERSION}"
  "capi sigs.k8s.io/cluster-api ${CAPI_VERSION}"
  "containerd github.com/containerd/containerd/v2 ${CONTAINERD_VERSION}"
  "runc github.com/opencontainers/runc ${RUNC_VERSION}"
  "cni github.com/containernetworking/plugins ${CNI_PLUGINS_VERSION}"
)
for pin in "${testbin_pins[@]}"; do
  read -r dir mod want <<<"${pin}"
  have="$(GOWORK=off go -C "hack/testbin/${dir}" list -m -f '{{.Version}}' "${mod}" 2>/dev/null || true)"
  if [[ "${have}" != "${want}" ]]; then
    echo "hack/testbin/${dir}: ${mod} is at ${have:-nothing}; versions.env says ${want}"
    bad=1
  fi
done
exit "${bad}"
