#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a time budget each.
#
#   bash hack/fuzz.sh [BUDGET] [REGEXP]
#
# BUDGET is a go test -fuzztime value (default 10s; make test uses a short
# one, make fuzz a long one); REGEXP keeps the targets whose name matches.
# Each package with targets is built once with fuzzing instrumentation, then
# each target runs from the package's directory, so a failing input is
# written to its testdata/fuzz/ as go test -fuzz does (commit it: it then
# runs as a seed in every plain go test). The generated corpus is kept
# outside the tree, in the cache directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

budget="${1:-10s}"
filter="${2:-.}"
root="$(pwd)"
cache="${AIRSHIP_FUZZ_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/airship/fuzz}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
mkdir -p "${cache}"

# Packages (as directories) holding fuzz targets, outside the e2e tree and
# the testbin modules.
mapfile -t dirs < <(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . |
  grep -v -e '^./hack/testbin/' -e '^./test/e2e/' | xargs -r -n1 dirname | sort -u)

ran=0 failed=0
for dir in "${dirs[@]}"; do
  mapfile -t targets < <(for f in "${dir}"/*_test.go; do grep -oE '^func Fuzz[A-Za-z0-9_]*' "${f}" || true; done |
    sed 's/^func //' | grep -E -- "${filter}" | sort -u || true)
  [[ ${#targets[@]} -gt 0 ]] || continue
  bin="${work}/$(echo "${dir#./}" | tr '/' '_').test"
  printf '== fuzz %s: building\n' "${dir#./}"
  go test -c -fuzz=. -o "${bin}" "${dir}"
  for t in "${targets[@]}"; do
    printf '== fuzz %s %s (%s)\n' "${dir#./}" "${t}" "${budget}"
    ran=$((ran + 1))
    if ! (cd "${root}/${dir}" && "${bin}" -test.run='^$' -test.fuzz="^${t}\$" -test.fuzztime="${budget}" \
      -test.fuzzcachedir="${cache}/$(echo "${dir#./}" | tr '/' '_')" 2>&1 | tail -n 20); then
      failed=$((failed + 1))
      echo "FAIL: ${dir#./} ${t} (the failing input is in ${dir#./}/testdata/fuzz/${t}/)"
    fi
  done
done
echo "fuzz: $((ran - failed)) passed, ${failed} failed"
[[ "${failed}" == 0 ]]
