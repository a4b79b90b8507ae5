#!/usr/bin/env bash
# Generates the example site's PKI and node scripts with promenade into the
# directory given as $1 (default: a new temporary directory):
#   $1/certificates.yaml, $1/pki/      generate-certs
#   $1/scripts/*.sh, anchors.yaml      build-all --validators
# A second run reuses the certificates written by the first.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$(mktemp -d -t promenade-demo.XXXXXX)}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
bin="${out}/.bin/promenade"
config=("${root}"/examples/site/promenade/*.yaml)

echo "== building promenade"
(cd "${root}" && go build -o "${bin}" ./cmd/promenade)

echo "== validating the example configuration"
"${bin}" validate "${config[@]}"

existing=()
if [[ -f "${out}/certificates.yaml" ]]; then
  existing=("${out}/certificates.yaml")
fi
echo "== generating the site PKI into ${out}"
tmp="${out}/.certs.new"
rm -rf "${tmp}"
"${bin}" generate-certs --output-dir "${tmp}" "${config[@]}" "${existing[@]}"
rm -rf "${out}/pki"
mv "${tmp}/pki" "${out}/pki"
mv "${tmp}/certificates.yaml" "${out}/certificates.yaml"
rmdir "${tmp}"

echo "== building node scripts into ${out}/scripts"
"${bin}" build-all --output-dir "${out}/scripts" --validators "${config[@]}" "${out}/certificates.yaml"

if command -v shellcheck >/dev/null 2>&1; then
  shellcheck "${out}"/scripts/*.sh
  echo "== shellcheck: clean"
fi
echo "== embedded files of genesis.sh"
bash "${out}/scripts/genesis.sh" --list | grep -v '/$' | sed 's/^/  /'
echo "done: ${out}"
