#!/usr/bin/env bash
# Checks that the tree is clean: formatting, vet, golangci-lint, tidy
# modules, pinned library versions, and generated code that matches its
# sources.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
step() { printf '== %s\n' "$*"; }

step gofmt
unformatted="$(find . -name '*.go' -not -path './hack/testbin/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
if [[ -n "${unformatted}" ]]; then
  echo "not gofmt-ed:"; echo "${unformatted}"; fail=1
fi

step shellcheck
if command -v shellcheck >/dev/null; then
  shellcheck .ci/run hack/*.sh hack/testbin/*.sh || fail=1
else
  echo "shellcheck not installed: run bash hack/setup.sh"; fail=1
fi

step "go vet"
go vet ./... || fail=1
go vet -tags e2e ./test/e2e/... || fail=1

step golangci-lint
# Pinned in hack/tools/go.mod; the linters and why are in docs/development.md.
# LINT_CONCURRENCY=1 keeps it to one core on a shared machine (0: all).
GOWORK=off go tool -modfile=hack/tools/go.mod golangci-lint run --concurrency "${LINT_CONCURRENCY:-0}" ./... || fail=1

step "go mod tidy"
go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; fail=1; }
for m in hack/tools hack/testbin/etcd hack/testbin/kubernetes hack/testbin/kwok hack/testbin/capi; do
  (cd "${m}" && GOWORK=off go mod tidy -diff) || { echo "${m}: not tidy"; fail=1; }
done

step "pinned versions"
bash hack/check-versions.sh || fail=1

step "generated code"
bash hack/generate.sh
if ! git diff --quiet -- api config charts || [[ -n "$(git status --porcelain --untracked-files=all -- api config charts)" ]]; then
  echo "generated code is stale: run make generate and commit the result"
  git status --short -- api config charts
  fail=1
fi

if [[ "${fail}" != 0 ]]; then
  echo "verify: FAILED"; exit 1
fi
echo "verify: ok"
