# Airship in Go. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := build

GO          ?= go
BIN         ?= bin
TESTBIN_DIR := $(shell bash hack/testbin/dir.sh)
# Packages run in parallel; go test -p follows the core count by default.
TEST_FLAGS  ?= -count=1 -timeout=20m
E2E_FLAGS   ?= -count=1 -timeout=40m -v

# Every build, test and image leaves kustomize's Go plugin loader out:
# rendering uses builtin plugins only and never loads code, and without the
# loader the linker exports no dynamic symbols (airshipctl 120 -> 90 MB,
# armada-operator 87 -> 63 MB).
export GOFLAGS := $(strip $(GOFLAGS) -tags=kustomize_disable_go_plugin_support)
export KUBEBUILDER_ASSETS := $(TESTBIN_DIR)
export AIRSHIP_TESTBIN_DIR := $(TESTBIN_DIR)
# Screenshots of the browser tests (internal/test/browser), one directory
# per test; kept after make test.
export AIRSHIP_TEST_ARTIFACTS ?= $(or $(TMPDIR),/tmp)/airship-test-artifacts

.PHONY: help
help: ## List targets.
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build airshipctl, promenade, armada-operator, metal3-operator, sip-operator and redfish-emulator into bin/ (stripped, trimmed paths).
	$(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/ ./cmd/airshipctl ./cmd/promenade ./cmd/armada-operator ./cmd/metal3-operator ./cmd/sip-operator ./cmd/redfish-emulator

.PHONY: setup
setup: ## Check the system tools (shellcheck, openssl, gcc, make, git, ...) and install missing ones with apt-get when root.
	bash hack/setup.sh

.PHONY: testbin
testbin: ## Build etcd, kube-apiserver, controller-manager, scheduler, kwok and the Cluster API managers into the cache (skips what is built).
	bash hack/testbin/build.sh

.PHONY: generate
generate: ## Regenerate deepcopy code, CRDs, RBAC and the Helm chart (charts/airship-operators, from config/default).
	bash hack/generate.sh

.PHONY: test
test: setup testbin ## Check system tools, build the binaries, then run every test (unit, envtest, full mode, end-to-end; fuzz targets on their committed corpus).
	@echo "== unit and integration tests (binaries in $(TESTBIN_DIR), screenshots into $(AIRSHIP_TEST_ARTIFACTS))"
	AIRSHIP_REQUIRE_TESTBIN=1 $(GO) test $(TEST_FLAGS) ./...
	@echo "== end-to-end tests"
	AIRSHIP_REQUIRE_TESTBIN=1 $(GO) test -tags e2e,kustomize_disable_go_plugin_support $(E2E_FLAGS) ./test/e2e/...

.PHONY: test-unit
test-unit: ## Run tests without building binaries (tests that need them skip).
	$(GO) test $(TEST_FLAGS) ./...

# Fuzzing: go test (and so make test) runs every target on its seeds and
# committed corpus only, so a test run is repeatable; make fuzz explores for
# FUZZTIME (FUZZ_RUN=REGEXP keeps the targets whose name matches).
FUZZTIME   ?= 2m
FUZZ_RUN   ?= .

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME (default 2m; FUZZ_RUN=REGEXP picks targets); failures land in the package's testdata/fuzz.
	bash hack/fuzz.sh $(FUZZTIME) '$(FUZZ_RUN)'

.PHONY: verify
verify: ## gofmt, shellcheck, go vet, golangci-lint (.golangci.yml), go mod tidy, pinned versions, generated code up to date.
	bash hack/verify.sh

.PHONY: demo
demo: setup testbin build images ## Bring up two local control planes (the target one with a real node; root) and deploy the example site: charts, hosts, SIP, Cluster API machines, the target cluster's operators as pods.
	bash hack/demo.sh

.PHONY: demo-down
demo-down: ## Stop what make demo started and remove what it wrote (both local control planes, its logs).
	bash hack/demo-down.sh

.PHONY: images
PUSH ?=
images: ## Build OCI images of the operators and the Promenade API into bin/images (no container runtime needed; PUSH=registry/repo pushes them).
	$(GO) run ./hack/images --out $(BIN)/images $(if $(PUSH),--push '$(PUSH)')

.PHONY: clean
clean: ## Remove bin/ (the binary cache is kept).
	rm -rf $(BIN)

# Benchmarks: every workload of bench/internal/suite against its peer, one
# table at the end. SHORT=1 runs the short sizes (under 10 minutes);
# BENCH_RUN=REGEXP keeps the workloads whose name matches; BENCH_DIR keeps
# the binaries, results and logs there (default: a new temporary directory).
SHORT     ?=
BENCH_RUN ?=
BENCH_DIR ?=

.PHONY: bench
bench: setup testbin ## Run every benchmark against its peer and print one table (SHORT=1: under 5 minutes).
	$(GO) run ./bench/cmd/bench $(if $(SHORT),-short) $(if $(BENCH_RUN),-run '$(BENCH_RUN)') $(if $(BENCH_DIR),-workdir '$(BENCH_DIR)')
