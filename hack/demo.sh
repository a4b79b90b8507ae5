#!/usr/bin/env bash
# The demo: bring up the local control plane (or reuse the running one),
# apply examples/quickstart and show the result with kubectl.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

airshipctl=bin/airshipctl
"${airshipctl}" cluster local up
kubeconfig="$("${airshipctl}" cluster local status -o json | sed -n 's/.*"kubeconfig": "\(.*\)".*/\1/p' | head -1)"
export KUBECONFIG="${kubeconfig}"

echo "== kubectl get nodes"
kubectl get nodes -o wide
echo "== applying examples/quickstart"
kubectl apply -k examples/quickstart
kubectl -n airship-demo rollout status deployment/hello --timeout=120s
echo "== kubectl -n airship-demo get deploy,pods -o wide"
kubectl -n airship-demo get deploy,pods -o wide
echo
"${airshipctl}" cluster local status
echo
echo "The cluster keeps running. Use it with: export KUBECONFIG=${kubeconfig}"
echo "Stop it with: ${airshipctl} cluster local down [--purge]"
