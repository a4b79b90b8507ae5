#!/usr/bin/env bash
# The core-charts-target phase's script (the ConfigMap
# promenade-core-charts, run by the GenericContainer executor
# promenade-core-charts): Promenade's core-component charts (charts/promenade:
# etcd, the API server, controller manager and scheduler, HAProxy,
# kube-proxy, Calico's etcd, Calico, the Promenade API and CoreDNS, in that
# order) deployed through Armada onto the phase's cluster, with their values
# from the site's Promenade documents and the PKI the site-pki phase
# generated.
#
#   PROMENADE_CONFIG_DIR  the site's Promenade documents (the mount's src)
#   PROMENADE_OUTPUT_DIR  the site-pki phase's output (certificates.yaml);
#                         the manifest is kept there as core-charts.yaml,
#                         mode 0600: the values carry private keys
#   PROMENADE_CHARTS_DIR  where the cluster's Armada operator reads the
#                         charts (default /opt/promenade/charts)
#   KUBECONFIG            the phase cluster's (the executor's private copy)
set -euo pipefail

config_dir="${PROMENADE_CONFIG_DIR:?set PROMENADE_CONFIG_DIR to the directory of the Promenade documents}"
out="${PROMENADE_OUTPUT_DIR:?set PROMENADE_OUTPUT_DIR to the directory that keeps the site PKI}"
charts="${PROMENADE_CHARTS_DIR:-/opt/promenade/charts}"
ns=kube-system
manifest=promenade
certs="${out}/certificates.yaml"
if [[ ! -f "${certs}" ]]; then
  echo "${certs} does not exist: run the site-pki phase first" >&2
  exit 1
fi

# The ArmadaManifest, its groups and charts, and each chart's values (private
# keys among them) in a Secret the chart reads through spec.valuesFrom.
promenade charts-values --armada --charts-dir "${charts}" -n "${ns}" --manifest-name "${manifest}" \
  --output-dir "${out}/core-charts" "${config_dir}"/*.yaml "${certs}" >&2
kubectl apply --server-side --field-manager=core-charts -f "${out}/core-charts/armada.yaml" >&2
applied=$(date +%s%N)

# Done when the operator has seen this generation of the manifest and
# reports it Ready: every group deployed in order, each chart's workloads
# (the anchors', kube-proxy's and calico-node's DaemonSets, the Deployments
# of calico-kube-controllers, CoreDNS and Promenade) ready.
jsonpath='{.metadata.generation}|{.status.observedGeneration}|{.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="Ready")].message}'
deadline=$((SECONDS + ${PROMENADE_CHARTS_TIMEOUT:-600}))
while :; do
  IFS="|" read -r gen observed ready message < <(kubectl -n "${ns}" get armadamanifest "${manifest}" -o jsonpath="${jsonpath}"; echo) || true
  if [[ "${gen}" == "${observed}" && "${ready}" == True ]]; then
    break
  fi
  if ((SECONDS >= deadline)); then
    echo "ArmadaManifest ${ns}/${manifest} not Ready after ${PROMENADE_CHARTS_TIMEOUT:-600}s: ${ready:-no status} ${message:-}" >&2
    kubectl -n "${ns}" get armadacharts >&2 || true
    exit 1
  fi
  sleep 1
done
elapsed=$((($(date +%s%N) - applied) / 1000000))
echo "ArmadaManifest ${ns}/${manifest}: every chart deployed and satisfied ${elapsed} ms after it was applied" >&2
kubectl -n "${ns}" get armadacharts >&2
