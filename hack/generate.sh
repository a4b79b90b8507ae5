#!/usr/bin/env bash
# Regenerates the code and manifests derived from the API types under api/:
# deepcopy methods (zz_generated.deepcopy.go) and CustomResourceDefinitions.
# Run from anywhere; it works from the repository root. Re-running it on an
# up-to-date tree must leave no diff.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# One line per API group: the directory holding its versions under api/, and
# the directory its CRDs are written to. All versions of a group are given to
# controller-gen together so a multi-version group yields one CRD per kind.
# Add a line here when a new group appears under api/.
crd_table=(
	"api/armada config/armada/crd/bases"
	"api/sip config/sip/crd/bases"
)

go tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...

for row in "${crd_table[@]}"; do
	read -r api_dir out_dir <<<"${row}"
	# Generated output only: clear it so a removed kind leaves no stale CRD.
	mkdir -p "${out_dir}"
	rm -f "${out_dir}"/*.yaml
	go tool controller-gen crd paths="./${api_dir}/..." output:crd:artifacts:config="${out_dir}"
done

# RBAC of the operators, from the +kubebuilder:rbac markers of their controllers.
go tool controller-gen rbac:roleName=armada-operator-manager paths=./internal/armada/... output:rbac:artifacts:config=config/armada/rbac
go tool controller-gen rbac:roleName=sip-operator-manager paths=./internal/sip/... output:rbac:artifacts:config=config/sip/rbac

# BareMetalHost (metal3.io/v1alpha1) is the upstream type, from the module
# github.com/metal3-io/baremetal-operator/apis: its CRD is generated from that
# package as upstream does (its hardware types hold floats, hence
# allowDangerousTypes). Only the kinds this project serves are kept.
metal3_tmp="$(mktemp -d)"
trap 'rm -rf "${metal3_tmp}"' EXIT
go tool controller-gen crd:allowDangerousTypes=true paths=github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1 output:crd:artifacts:config="${metal3_tmp}"
mkdir -p config/metal3/crd/bases
rm -f config/metal3/crd/bases/*.yaml
cp "${metal3_tmp}/metal3.io_baremetalhosts.yaml" config/metal3/crd/bases/
# The Cluster API infrastructure provider (infrastructure.cluster.x-k8s.io)
# and its IP pools (ipam.metal3.io) run in the same operator: their CRDs
# go beside the BareMetalHost's.
for api_dir in api/infrastructure api/ipam; do
	[ -d "${api_dir}" ] || continue
	go tool controller-gen crd paths="./${api_dir}/..." output:crd:artifacts:config=config/metal3/crd/bases
done

# RBAC of the metal3 operator.
go tool controller-gen rbac:roleName=metal3-operator-manager paths=./internal/metal3/... output:rbac:artifacts:config=config/metal3/rbac

# The Helm chart charts/airship-operators, from the kustomize build of
# config/default (after the CRDs and RBAC above, which it carries).
go run ./hack/chart
