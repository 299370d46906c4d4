# Ballast build. Every Go module is built and tested on its own; go.work ties
# them together. Run `make help` for the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

GO      ?= go
MODULES := load-watcher scheduler descheduler installer simulator charts images
# Modules that hold Go code yet (a new module starts with its go.mod alone).
GO_MODULES = $(foreach m,$(MODULES),$(if $(shell find $(m) -name '*.go' -print -quit),$(m)))
BIN     := $(CURDIR)/bin
# Kubernetes test binaries link at ~2.5 GB each: keep two at a time at most.
GOTEST_FLAGS ?= -count=1 -p 2 -timeout 30m
BENCH_FLAGS  ?= -run '^$$' -bench . -benchmem
# `make images`: platforms to build, and the version (empty: the chart's appVersion).
PLATFORMS ?= linux/amd64,linux/arm64,linux/arm/v7
VERSION   ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: demo
demo: ## Compare the default scheduler and Ballast on a simulated homelab (no cluster, no network needed).
	cd installer && $(GO) run ./cmd/ballast sim --scenario homelab-mixed

.PHONY: build
build: ## Build every binary into bin/.
	@mkdir -p $(BIN)
	@for m in $(GO_MODULES); do \
		if [ -d $$m/cmd ]; then echo "build $$m"; (cd $$m && $(GO) build -o $(BIN)/ ./cmd/...); fi; \
	done

.PHONY: images
images: ## Cross-compile the three components and build their images into _output/images (PLATFORMS=, VERSION=; no Docker).
	cd images && $(GO) run ./cmd/ballast-images --root $(CURDIR) --platforms $(PLATFORMS) $(if $(VERSION),--version $(VERSION))

.PHONY: test
test: lint test-all ## Lint, then every unit and integration test of every module (what CI runs).

.PHONY: test-all
test-all: ## Unit and integration tests of every module.
	@for m in $(GO_MODULES); do echo "== test $$m"; (cd $$m && $(GO) test $(GOTEST_FLAGS) ./...); done

.PHONY: test-unit
test-unit: ## Fast unit tests only (-short: no control plane, no Prometheus).
	@for m in $(GO_MODULES); do echo "== unit $$m"; (cd $$m && $(GO) test -short $(GOTEST_FLAGS) ./...); done

.PHONY: lint
lint: ## gofmt check, go vet, and the generated replace blocks up to date.
	@bad=$$(gofmt -l $(MODULES)); if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	@for m in $(GO_MODULES); do echo "== vet $$m"; (cd $$m && $(GO) vet ./...); done
	@hack/update-k8s-replace.sh --verify

.PHONY: bench
bench: ## Benchmarks of every module (figures go to docs/performance.md).
	@for m in $(GO_MODULES); do echo "== bench $$m"; (cd $$m && $(GO) test $(BENCH_FLAGS) ./...); done

.PHONY: bench-balance
bench-balance: ## Balance of every shipped scenario: default scheduler vs Ballast (docs/performance.md).
	cd simulator && $(GO) run ./cmd/bench-balance

.PHONY: update-replace
update-replace: ## Regenerate the Kubernetes replace blocks from hack/k8s-version.
	hack/update-k8s-replace.sh

.PHONY: clean
clean: ## Remove built binaries and images.
	rm -rf $(BIN) _output
