# Ballast build. Run `make help` for the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

GO      ?= go
# The repository is a go.work of modules (docs/architecture.md says why): the
# ground floor they share (core), the components on it (load-watcher,
# scheduler, descheduler), each a module a program of someone else's can
# require alone, and above them what assembles and tests them. hack/verify-layers
# holds modules and packages to requiring and importing only downward.
# Modules outside go.work, which build the stacks Ballast is compared with
# (`make peers-bins`), the lane's tools (e2e/build/*, other Kubernetes lines)
# and the programs that consume Ballast's modules (test/consumers/*), are
# gofmt-checked with it and vetted where they are built.
# Every package of every module of go.work: `./...` names no module at the root.
PKGS     = $(shell $(GO) list -m -f '{{.Path}}/...')

BIN     := $(CURDIR)/bin
# Every build, vet and test is static (no cgo), as the images must be, so one
# compilation of each package serves the tests, the real-node lane's binaries
# and the lane's images: a cold `make test` compiles client-go, apiserver and
# the scheduler framework once.
# (Tests cannot take -trimpath: kube-apiserver's test server finds its
# fixtures through its source path. The release images do; the lane's are
# built with --keep-paths to match the tests.)
export CGO_ENABLED ?= 0
# Kubernetes test binaries link at ~2.5 GB each: keep two at a time at most.
GOTEST_FLAGS ?= -count=1 -p 2 -timeout 30m
BENCH_FLAGS  ?= -run '^$$' -bench . -benchmem
# `make fuzz`: how long each fuzz target runs; `make test-fuzz` (the GitHub CI fuzz step) TEST_FUZZTIME each.
# `make test` does not fuzz: a fuzz build instruments the whole kube-scheduler tree, 10+ minutes cold per package.
FUZZTIME      ?= 10s
TEST_FUZZTIME ?= 5s
# How long each new input may be minimised (hack/fuzz.sh).
FUZZMINIMIZETIME ?= 1s
# `make images`: platforms to build, and the version (empty: the chart's appVersion).
PLATFORMS ?= linux/amd64,linux/arm64,linux/arm/v7
VERSION   ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: demo
demo: ## Compare the default scheduler and Ballast on a simulated homelab (no cluster, no network needed).
	cd simulator && $(GO) run ./cmd/ballast-sim --scenario homelab-mixed

.PHONY: build
build: ## Build every binary into bin/.
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ $(foreach m,load-watcher scheduler descheduler installer simulator images,github.com/ballast-sched/ballast/$(m)/cmd/...)

.PHONY: images
images: ## Cross-compile the three components and build their images into _output/images (PLATFORMS=, VERSION=; no Docker).
	cd images && $(GO) run ./cmd/ballast-images --root $(CURDIR) --platforms $(PLATFORMS) $(if $(VERSION),--version $(VERSION))

# `make push REGISTRY=registry.lan:5000/ballast`: the images of `make images`,
# pushed to your registry (docs/install.md#any-cluster-from-a-checkout).
.PHONY: push
push: ## Build the images and push them to REGISTRY=host[:port]/path (PLAIN_HTTP=1 for a registry without TLS; PLATFORMS=, VERSION=; no Docker).
	@test -n "$(REGISTRY)" || { echo "make push: say where, e.g. make push REGISTRY=registry.lan:5000/ballast (PLAIN_HTTP=1 for a registry without TLS)" >&2; exit 2; }
	cd images && $(GO) run ./cmd/ballast-images --root $(CURDIR) --platforms $(PLATFORMS) $(if $(VERSION),--version $(VERSION)) \
		--registry $(REGISTRY) --push $(if $(PLAIN_HTTP),--plain-http) $(PUSH_FLAGS)

.PHONY: test
test: lint test-all lane ## Lint, every unit and integration test, then the real-node lanes: a user's journey (Helm path), the k3s journey and the fault suite (what CI runs).

.PHONY: test-all
test-all: ## Unit and integration tests of every package of every module, and the programs that consume Ballast's modules.
	$(GO) test $(GOTEST_FLAGS) $(PKGS)

.PHONY: fuzz
fuzz: ## Run every fuzz target of every package for FUZZTIME (10s) each.
	@FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) hack/fuzz.sh $(FUZZTIME)

.PHONY: test-fuzz
test-fuzz: ## Every fuzz target for TEST_FUZZTIME (5s) each, as the GitHub CI fuzz step runs them.
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(TEST_FUZZTIME)

.PHONY: test-unit
test-unit: ## Fast unit tests only (-short: no control plane, no Prometheus).
	$(GO) test -short $(GOTEST_FLAGS) $(PKGS)

.PHONY: lint
lint: ## gofmt check, go vet, each module tidy alone and in step with go.work, the generated replace block, requirements and imports only downward (hack/verify-layers), every link and anchor of the docs and the CLI's messages (hack/verify-docs), workflow actions pinned by commit, and vulncheck when its database answers.
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(PKGS)
	@hack/update-k8s-replace.sh --verify
	@hack/verify-modules.sh
	$(GO) run ./hack/verify-layers
	$(GO) run ./hack/verify-docs
	@hack/verify-action-pins.sh
	@$(MAKE) --no-print-directory vulncheck-lint

# govulncheck reports the known vulnerabilities (Go vulnerability database)
# that Ballast's code can reach, in the dependency versions go.work selects.
GOVULNCHECK ?= $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0
GOVULNDB    ?= https://vuln.go.dev
# `make lint` skips vulncheck when the database does not answer (offline), and
# says so; VULNCHECK=required makes that an error, VULNCHECK=skip skips it (CI
# runs `make vulncheck` as a job of its own). `make vulncheck` always needs it.
VULNCHECK   ?=
VULNDB_PROBE = case "$(GOVULNDB)" in \
	file://*) test -f "$(patsubst file://%,%,$(GOVULNDB))/index/db.json" ;; \
	*) curl -fsS --max-time 10 -o /dev/null "$(GOVULNDB)/index/db.json" 2>/dev/null ;; esac

.PHONY: vulncheck
vulncheck: ## Fail on known vulnerabilities reachable from Ballast's code (govulncheck; needs the database at GOVULNDB).
	$(GOVULNCHECK) -db "$(GOVULNDB)" $(PKGS)

.PHONY: vulncheck-lint
vulncheck-lint:
	@if [ "$(VULNCHECK)" = skip ]; then echo "vulncheck: skipped (VULNCHECK=skip)"; \
	elif $(VULNDB_PROBE); then $(MAKE) --no-print-directory vulncheck; \
	elif [ "$(VULNCHECK)" = required ]; then echo "vulncheck: the vulnerability database $(GOVULNDB) does not answer, and VULNCHECK=required" >&2; exit 1; \
	else echo "vulncheck: skipped: the vulnerability database $(GOVULNDB) does not answer (offline?); VULNCHECK=required makes this an error"; fi

.PHONY: bench
bench: ## Benchmarks of every package (figures go to docs/performance.md).
	$(GO) test $(BENCH_FLAGS) $(PKGS)

.PHONY: bench-load-watcher
bench-load-watcher: ## load-watcher at 1 000 and 5 000 nodes: request latency, ingest, memory of 15 minutes of samples, process RSS (docs/performance.md).
	cd load-watcher && $(GO) test -run '^$$' -bench . -benchmem -count 3 ./pkg/server/ ./pkg/collector/
	cd load-watcher && $(GO) test -run '^$$' -bench 'Usage/nodes=5000' -benchmem -count 3 -benchtime 3s ./pkg/server/
	cd load-watcher && for i in 1 2 3; do $(GO) test -run '^$$' -bench ServeRSS ./cmd/load-watcher/app/ || exit 1; done # one process per run
	cd load-watcher && $(GO) build -o $(CURDIR)/_output/bench/load-watcher ./cmd/load-watcher
	for i in 1 2 3; do hack/load-watcher-rss.sh _output/bench/load-watcher || exit 1; done

.PHONY: bench-scheduler
bench-scheduler: ## Scheduling throughput at 500 and 5 000 nodes: kube-scheduler's default profile, the same with a plugin that does nothing, and ballast-scheduler side by side, each a process of its own, interleaved rounds, pods/s and CPU per pod; then the plugin micro-benchmark at both sizes (docs/performance.md; ~1 h).
	cd integration && $(GO) test -c -o $(CURDIR)/_output/bench/scheduler-integration.test ./scheduler/
	cd integration/scheduler && $(CURDIR)/_output/bench/scheduler-integration.test -test.run '^$$' \
		-test.bench BenchmarkSchedulingThroughput -test.benchtime 1x -test.timeout 180m
	cd scheduler && $(GO) test -run '^$$' -bench BenchmarkFilterAndScore -benchmem -count 3 ./pkg/plugins/loadaware/

.PHONY: bench-freshness
bench-freshness: ## How long a step in a node's real usage takes to reach the metrics API, load-watcher's API and LoadAware's score, with metrics-server's 15 s scrapes and the chart's default intervals; with `make peers-bins` done, Trimaran's too (docs/performance.md; ~10 min).
	cd simulator && $(GO) test -run '^$$' -bench BenchmarkFreshness -benchtime 1x -timeout 60m ./test/integration/

.PHONY: bench-balance
bench-balance: ## Balance of every shipped scenario: default scheduler, upstream load-aware peer (needs peers-bins; ~1.5 h) and Ballast (docs/performance.md).
	cd simulator && $(GO) run ./cmd/bench-balance

# `make bench-random`: how many random homelabs, from which seed, of how many
# nodes, for how long (scenario.Random), how many simulations at a time.
RANDOM_N        ?= 100
RANDOM_SEED     ?= 1
RANDOM_NODES    ?= 2-60
RANDOM_DURATION ?= 1h
RANDOM_JOBS     ?= 2

.PHONY: bench-random
bench-random: ## Balance on RANDOM_N (100) random homelabs of RANDOM_NODES (2-60) nodes: default scheduler and Ballast, the distribution of the spread over the best placement, evictions, loops and the worst seeds (docs/performance.md).
	cd simulator && $(GO) run ./cmd/bench-balance -peers=false -random $(RANDOM_N) -seed $(RANDOM_SEED) -nodes $(RANDOM_NODES) -duration $(RANDOM_DURATION) -jobs $(RANDOM_JOBS)

.PHONY: update-replace
update-replace: ## Regenerate the Kubernetes replace blocks from hack/k8s-version.
	hack/update-k8s-replace.sh

# The real-node e2e lane's binaries, all static and built from Go modules.
# Kubernetes comes from the e2e module (on the project's Kubernetes line);
# containerd, metrics-server and CoreDNS from their own modules under
# e2e/build/, outside go.work, because they pin other Kubernetes lines. Their
# modules pin what they share with the component images to the images'
# versions (hack/update-e2e-build-pins.sh), and everything builds with the
# settings of the tests (CGO_ENABLED=0 exported above, no -trimpath), so
# client-go, apiserver, grpc and friends compile once for the tests, the lane
# and the lane's images. One binary per `go build` keeps
# this build at one ~2.5 GB link at a time.
E2E_BIN     := $(CURDIR)/_output/e2e/bin
E2E_GOBUILD  = $(GO) build
K8S_VERSION  = $(shell tr -d '[:space:]' <hack/k8s-version)
# What Kubernetes's own build stamps into its binaries (hack/lib/version.sh):
# without it they report v0.0.0-master to the API server.
K8S_LDFLAGS  = $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,-X $(p).gitVersion=$(K8S_VERSION) -X $(p).gitMajor=$(patsubst v%,%,$(word 1,$(subst ., ,$(K8S_VERSION)))) -X $(p).gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION))) -X $(p).gitTreeState=clean)
E2E_K8S_CMDS := kubelet kube-proxy kube-apiserver kube-controller-manager kube-scheduler
CONTAINERD   := github.com/containerd/containerd/v2
# urfave_cli_no_docs, and no_grpc for the shim, are the tags containerd's own
# Makefile builds with. No tag is needed for CGO_ENABLED=0: btrfs, the one cgo
# snapshotter, is left out by its own `cgo` build constraint.
CONTAINERD_TAGS := urfave_cli_no_docs
MODVERSION   = GOWORK=off $(GO) list -m -f '{{.Version}}'

.PHONY: e2e-bins
e2e-bins: ## Build the real-node e2e lane's binaries (Kubernetes, containerd, metrics-server, CoreDNS, pause, hog, hostile, the k3s lane's server and Job program) into _output/e2e/bin/.
	@mkdir -p $(E2E_BIN)
	@for c in $(E2E_K8S_CMDS); do echo "build $$c"; \
		(cd e2e && $(E2E_GOBUILD) -ldflags "-s -w $(K8S_LDFLAGS)" -o $(E2E_BIN)/$$c k8s.io/kubernetes/cmd/$$c); done
	@for c in ballast-node ballast-k3s; do echo "build $$c"; (cd e2e && $(E2E_GOBUILD) -o $(E2E_BIN)/$$c ./cmd/$$c); done
	@for c in pause hog hostile klipper-helm; do echo "build $$c"; (cd e2e && $(E2E_GOBUILD) -ldflags "-s -w" -o $(E2E_BIN)/$$c ./cmd/$$c); done
	@cd e2e/build/containerd && v=$$($(MODVERSION) $(CONTAINERD)) && \
	for c in containerd ctr containerd-shim-runc-v2; do echo "build $$c $$v"; \
		tags="$(CONTAINERD_TAGS)"; [ $$c = containerd-shim-runc-v2 ] && tags="$$tags no_grpc"; \
		GOWORK=off $(E2E_GOBUILD) -tags "$$tags" -ldflags "-s -w -X $(CONTAINERD)/version.Version=$$v" \
			-o $(E2E_BIN)/$$c $(CONTAINERD)/cmd/$$c; done
	@cd e2e/build/metrics-server && v=$$($(MODVERSION) sigs.k8s.io/metrics-server) && echo "build metrics-server $$v" && \
		GOWORK=off $(E2E_GOBUILD) -ldflags "-s -w -X k8s.io/client-go/pkg/version.gitVersion=$$v" \
			-o $(E2E_BIN)/metrics-server sigs.k8s.io/metrics-server/cmd/metrics-server
	@cd e2e/build/coredns && echo "build coredns $$($(MODVERSION) github.com/coredns/coredns)" && \
		GOWORK=off $(E2E_GOBUILD) -ldflags "-s -w" -o $(E2E_BIN)/coredns .

# The upstream load-aware peer that `make bench-balance` compares Ballast
# with (docs/performance.md): kube-scheduler with scheduler-plugins' Trimaran
# plugins, from peers/trimaran, a module outside go.work because
# scheduler-plugins pins another Kubernetes line. It stamps the Kubernetes
# version it is built on, as Kubernetes's own build does, and is vetted once
# built (the vet reuses the build's packages). Not part of `make test`: it
# compiles a whole second Kubernetes line (~10-15 min cold on 2 cores).
PEERS_BIN := $(CURDIR)/_output/peers/bin

.PHONY: peers-bins
peers-bins: ## Build the upstream load-aware peer (scheduler-plugins' Trimaran kube-scheduler) into _output/peers/bin/.
	@mkdir -p $(PEERS_BIN)
	@cd peers/trimaran && v=$$($(MODVERSION) sigs.k8s.io/scheduler-plugins) && k=$$($(MODVERSION) k8s.io/kubernetes) && \
		echo "build trimaran-scheduler (scheduler-plugins $$v, Kubernetes $$k)" && \
		GOWORK=off $(E2E_GOBUILD) -ldflags "-s -w $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,-X $(p).gitVersion=$$k)" \
			-o $(PEERS_BIN)/trimaran-scheduler . && \
		GOWORK=off $(GO) vet .

E2E_OUT      := $(CURDIR)/_output/e2e
HOST_ARCH     = $(shell $(GO) env GOARCH)

# Both lanes run the tests of the e2e module against images and binaries
# built from this checkout.
E2E_TEST = cd e2e && PATH="$$PATH:/usr/sbin:/sbin" BALLAST_E2E_BIN=$(E2E_BIN) BALLAST_E2E_CLI=$(E2E_BIN)/ballast \
	BALLAST_E2E_IMAGES=$(CURDIR)/_output/images/ballast-images-linux-$(HOST_ARCH).tar,$(E2E_OUT)/images.tar \
	BALLAST_E2E_FIGURES=$(E2E_OUT)/figures.md BALLAST_E2E_RELIABILITY=$(E2E_OUT)/reliability.md \
	$(GO) test -tags e2e -count=1 -v -timeout 40m

.PHONY: e2e-prep
e2e-prep: e2e-bins
	cd images && $(GO) run ./cmd/ballast-images --root $(CURDIR) --platforms linux/$(HOST_ARCH) --keep-paths
	cd e2e && $(GO) run ./cmd/e2e-images -bin $(E2E_BIN) -out $(E2E_OUT)/images.tar
	cd installer && $(GO) build -o $(E2E_BIN)/ballast ./cmd/ballast

.PHONY: e2e
e2e: e2e-prep ## The real-node lane (docs/e2e.md; needs root): the host's images, then a user's journey on a real kubelet.
	$(E2E_TEST) -run TestUserJourney .

.PHONY: e2e-k3s
e2e-k3s: e2e-prep ## The k3s lane (docs/e2e.md; needs root): k3s's helm-controller installs Ballast from the HelmChart `ballast install --images` writes, on a real node.
	$(E2E_TEST) -run TestK3sJourney .

.PHONY: test-faults
test-faults: e2e-prep ## Faults on the real-node lane (docs/reliability.md; needs root): Ballast under a pod stream while its parts crash and restart.
	$(E2E_TEST) -run TestFaults .

# `make test` runs the lane tests from one preparation and one test binary.
.PHONY: lane
lane: e2e-prep
	$(E2E_TEST) -run '^(TestStreamPairsStraddling|TestUserJourney|TestK3sJourney|TestFaults)$$' .

# `make release`: every artifact a release publishes, built from this tree
# (its chart's version and registry: hack/set-chart-version.sh sets them),
# then checked (release/pkg/release: the chart pulls the images built in the
# same run). The release workflow signs and uploads the directory.
RELEASE_OUT := $(CURDIR)/_output/release

.PHONY: release
release: ## Build every release artifact into _output/release/ (ballast and ballast-sim for 5 platforms, chart, images, SBOMs, SHA256SUMS) and test it.
	rm -rf $(RELEASE_OUT)
	$(GO) run ./release/cmd/ballast-release build --root $(CURDIR) --out $(RELEASE_OUT)
	BALLAST_RELEASE_DIR=$(RELEASE_OUT) $(GO) test -count=1 -run '^TestRelease$$' -v ./release/pkg/release/

.PHONY: clean
clean: ## Remove built binaries and images.
	rm -rf $(BIN) $(CURDIR)/_output
