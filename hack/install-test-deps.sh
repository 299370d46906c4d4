#!/usr/bin/env bash
# Installs what `make test` and `make images` need beyond Go: the Prometheus
# server (Debian package) that load-watcher's integration tests start on
# loopback, the CA bundle (Debian package ca-certificates) every image
# carries, and every module's Go dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=""
apt_install() {
	[ -n "$updated" ] || { $sudo apt-get update -qq; updated=1; }
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v prometheus >/dev/null 2>&1; then
	apt_install prometheus
	# The package starts a server on :9090 where an init system runs; tests
	# start their own on a free loopback port instead.
	$sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
prometheus --version 2>&1 | head -n 1

# images/pkg/build copies this file into every image.
[ -s /etc/ssl/certs/ca-certificates.crt ] || apt_install ca-certificates
echo "CA bundle: $(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt) certificates"

for gomod in */go.mod; do
	(cd "$(dirname "$gomod")" && go mod download)
done
