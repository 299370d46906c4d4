#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, from Debian's packages:
#   - prometheus: the server load-watcher's integration tests start on loopback;
#   - ca-certificates: images/pkg/build copies its bundle into every image;
#   - runc, containernetworking-plugins, iptables, conntrack, iproute2,
#     util-linux: the real node of the end-to-end lane (docs/e2e.md);
# and the Go dependencies of the module and of the lane's build modules.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(prometheus ca-certificates runc containernetworking-plugins iptables conntrack iproute2 util-linux)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
	# A host with Docker (GitHub's runners) has runc from containerd.io,
	# whose package conflicts with Debian's.
	[ "$p" = runc ] && [ -x /usr/bin/runc ] && continue
	missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	# The prometheus package starts a server on :9090 where an init system
	# runs; tests start their own on a free loopback port instead.
	$sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
# The lane's nodes need overlayfs and bridge netfilter: built into some
# kernels, modules in others (Ubuntu's).
if [ "$(id -u)" -eq 0 ]; then modprobe -a overlay br_netfilter 2>/dev/null || true
else sudo modprobe -a overlay br_netfilter 2>/dev/null || true; fi
prometheus --version 2>&1 | head -n 1
runc --version | head -n 1
echo "CA bundle: $(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt) certificates"

# The modules of go.work, and the lane's build modules (other Kubernetes lines).
go mod download
for gomod in e2e/build/*/go.mod; do
	(cd "$(dirname "$gomod")" && GOWORK=off go mod download)
done
