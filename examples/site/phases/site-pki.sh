#!/usr/bin/env bash
# The site-pki phase's script (the ConfigMap promenade-site-pki, run by the
# GenericContainer executor promenade-site-pki): the site's PKI and node
# scripts from its Promenade documents, and the target cluster's CA from
# that PKI as the Secret Cluster API signs the target cluster's bootstrap
# data and kubeconfig with.
#
#   PROMENADE_CONFIG_DIR  the site's Promenade documents (the mount's src)
#   PROMENADE_OUTPUT_DIR  where the PKI is kept: certificates.yaml, pki/,
#                         scripts/. Certificates already there are reused,
#                         so the PKI is generated once.
#   KUBECONFIG            the phase cluster's (the executor's private copy)
set -euo pipefail

config_dir="${PROMENADE_CONFIG_DIR:?set PROMENADE_CONFIG_DIR to the directory of the Promenade documents}"
out="${PROMENADE_OUTPUT_DIR:?set PROMENADE_OUTPUT_DIR to the directory that keeps the site PKI}"
config=("${config_dir}"/*.yaml)
mkdir -p "${out}"

promenade validate "${config[@]}" >&2

existing=()
if [[ -f "${out}/certificates.yaml" ]]; then
  existing=("${out}/certificates.yaml")
fi
tmp="${out}/.certs.new"
rm -rf "${tmp}"
promenade generate-certs --output-dir "${tmp}" "${config[@]}" "${existing[@]}" >"${out}/generate-certs.log" 2>&1
grep '^wrote' "${out}/generate-certs.log" >&2
rm -rf "${out}/pki"
mv "${tmp}/pki" "${out}/pki"
mv "${tmp}/certificates.yaml" "${out}/certificates.yaml"
rmdir "${tmp}"

promenade build-all --output-dir "${out}/scripts" --validators "${config[@]}" "${out}/certificates.yaml" >&2

# The target cluster's CA, the PKI's kubernetes CA, for Cluster API in the
# ephemeral cluster. After the pivot the namespace lives in the target
# cluster (with the Secret): nothing to do here then.
ns=metal3
moved_to=$(kubectl get namespace "${ns}" --ignore-not-found -o jsonpath='{.metadata.annotations.airshipit\.org/moved-to}')
if [[ -n "${moved_to}" ]]; then
  echo "namespace ${ns} was moved to ${moved_to}: the CA Secret is there" >&2
  exit 0
fi
kubectl create namespace "${ns}" --dry-run=client -o yaml | kubectl apply --server-side --field-manager=site-pki -f - >&2
kubectl -n "${ns}" create secret generic tenant-1-ca --type cluster.x-k8s.io/secret \
  --from-file=tls.crt="${out}/pki/ca-kubernetes.pem" --from-file=tls.key="${out}/pki/ca-kubernetes-key.pem" \
  --dry-run=client -o yaml |
  kubectl label --local -f - cluster.x-k8s.io/cluster-name=tenant-1 -o yaml |
  kubectl apply --server-side --field-manager=site-pki -f - >&2
