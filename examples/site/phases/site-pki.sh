#!/usr/bin/env bash
# The site-pki phase's script (the ConfigMap promenade-site-pki, run by the
# GenericContainer executor promenade-site-pki): the site's PKI and node
# scripts from its Promenade documents; the target cluster's CA from that
# PKI as the Secret Cluster API signs the target cluster's bootstrap data
# and kubeconfig with; and the secrets of SIP's jump host and OIDC service.
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

# What the phase puts in the ephemeral cluster, each Secret labelled to move
# with its namespace in the pivot: the target cluster's CA (the PKI's
# kubernetes CA) for Cluster API, and SIP's secrets for the tenant
# cluster's services: the jump host's key to the hosts (the PKI's
# jump-host-ssh keypair) and the OIDC client secret (random, made once).
oidc_secret="${out}/oidc-client-secret"
if [[ ! -s "${oidc_secret}" ]]; then
  (umask 077 && head -c 32 /dev/urandom | base64 | tr -d '/+=\n' >"${oidc_secret}")
fi

# apply NAMESPACE LABELS KUBECTL-CREATE-ARGS...: creates the namespace and
# the object with the move label and LABELS (comma-separated key=value),
# unless the namespace was moved (then both live where it went).
apply() {
  local ns="$1" extra=()
  IFS=, read -r -a extra <<<"$2"
  shift 2
  local moved_to
  moved_to=$(kubectl get namespace "${ns}" --ignore-not-found -o jsonpath='{.metadata.annotations.airshipit\.org/moved-to}')
  if [[ -n "${moved_to}" ]]; then
    echo "namespace ${ns} was moved to ${moved_to}: ${2} ${4} is there" >&2
    return
  fi
  kubectl create namespace "${ns}" --dry-run=client -o yaml | kubectl apply --server-side --field-manager=site-pki -f - >&2
  kubectl -n "${ns}" "$@" --dry-run=client -o yaml |
    kubectl label --local -f - clusterctl.cluster.x-k8s.io/move= "${extra[@]}" -o yaml |
    kubectl apply --server-side --field-manager=site-pki -f - >&2
}
apply metal3 cluster.x-k8s.io/cluster-name=tenant-1 create secret generic tenant-1-ca --type cluster.x-k8s.io/secret \
  --from-file=tls.crt="${out}/pki/ca-kubernetes.pem" --from-file=tls.key="${out}/pki/ca-kubernetes-key.pem"
apply tenant-1 "" create secret generic tenant-1-node-ssh-keys --from-file=id_ecdsa="${out}/pki/jump-host-ssh-key.pem"
apply tenant-1 "" create secret generic tenant-1-oidc --from-file=kubernetes="${oidc_secret}"
