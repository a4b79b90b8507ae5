#!/usr/bin/env bash
# Prints the cache directory that holds the control-plane binaries for the
# pinned versions. AIRSHIP_TESTBIN_DIR overrides it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC1091 # versions.env sits beside this script
source "${here}/versions.env"
if [[ -n "${AIRSHIP_TESTBIN_DIR:-}" ]]; then
  echo "${AIRSHIP_TESTBIN_DIR}"
else
  echo "${XDG_CACHE_HOME:-$HOME/.cache}/airship/k8s-${KUBERNETES_VERSION}-etcd-${ETCD_VERSION}-kwok-${KWOK_VERSION}/bin"
fi
