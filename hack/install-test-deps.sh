#!/usr/bin/env bash
# Installs what `make test` needs beyond Go: the Prometheus server (Debian
# package) that load-watcher's integration tests start on loopback, and every
# module's Go dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v prometheus >/dev/null 2>&1; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
	# The package starts a server on :9090 where an init system runs; tests
	# start their own on a free loopback port instead.
	$sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
prometheus --version 2>&1 | head -n 1

for gomod in */go.mod; do
	(cd "$(dirname "$gomod")" && go mod download)
done
