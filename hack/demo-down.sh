#!/usr/bin/env bash
# Undoes `make demo`: stops the local processes a running demo started
# (listed in its pids file), its two local Ironics (`airshipctl ironic
# local down`: the processes their state directories recorded), both local
# control planes, and removes the directories the demo wrote:
# ~/.airship/local, ~/.airship/local-target and ${TMPDIR:-/tmp}/airship-demo
# (which holds the Ironics' state and the emulated hosts' disks). Nothing
# else is touched; running it twice, or with no demo, is fine.
#
# Usage: hack/demo-down.sh               everything above
#        hack/demo-down.sh --processes   only stop the local processes and the Ironics
#                                        (hack/demo.sh does this before starting its own)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

airshipctl=bin/airshipctl
logs="${TMPDIR:-/tmp}/airship-demo"
unset AIRSHIP_LOCAL_STATE_DIR

stopped=()
if [[ -f "${logs}/pids" ]]; then
  while read -r pid exe; do
    # Only a process still running the binary the demo started, or the
    # one it replaced: `make build` while the demo runs leaves the running
    # processes on a deleted file.
    running="$(readlink "/proc/${pid}/exe" 2>/dev/null || true)"
    started="$(readlink -f "${exe}")"
    if [[ -n "${pid}" && ("${running}" == "${started}" || "${running}" == "${started} (deleted)") ]]; then
      echo "stopping $(basename "${exe}") (pid ${pid})"
      kill "${pid}" 2>/dev/null || true
      stopped+=("${pid}")
    fi
  done <"${logs}/pids"
  # Wait for them to exit, so their ports are free when this returns.
  for pid in "${stopped[@]}"; do
    for _ in $(seq 100); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
  done
  rm -f "${logs}/pids"
fi
# The Ironics keep their state directories (database, logs) until the
# directory goes below; a later `make demo` starts them again on it.
for dir in "${logs}/ironic" "${logs}/ironic-target"; do
  if [[ -f "${dir}/state.json" ]]; then
    "${airshipctl}" ironic local down --state-dir "${dir}"
  fi
done
if [[ "${1:-}" == "--processes" ]]; then
  exit 0
fi
for dir in "${HOME}/.airship/local-target" "${HOME}/.airship/local"; do
  if [[ -d "${dir}" ]]; then
    echo "stopping the local control plane in ${dir}"
    "${airshipctl}" cluster local down --state-dir "${dir}" --purge
  fi
done
rm -rf "${logs}"
echo "demo removed"
