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
