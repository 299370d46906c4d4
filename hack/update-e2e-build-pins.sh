#!/usr/bin/env bash
# Pins the modules that e2e/build/* (containerd, metrics-server, CoreDNS, built
# from their own modules for the real-node lane) share with Ballast's
# components to the versions the components' images are built with. With the
# same versions and build flags, `make e2e` compiles each shared package once
# (client-go, apiserver, grpc, protobuf, otel, ...) instead of once per binary,
# which is most of a cold CI run's e2e build. A pin never changes what is
# tested of Ballast; it only picks which patch of a library the test tools use.
# Run it after changing a module's requirements; a stale pin costs only
# build time (the shared packages are compiled twice), never correctness.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

begin='// BEGIN pins to the component images'"'"' versions (hack/update-e2e-build-pins.sh)'
end='// END pins'

# What the images are built from: the workspace's build list (go.work), which
# every module's go.mod lists alike (hack/verify-modules.sh).
reference=$(mktemp)
trap 'rm -f "$reference"' EXIT
(cd "$root" && go list -m -f '{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' all) |
	awk 'NF == 2 && $2 != "" && !seen[$1]++' | sort >"$reference"

for dir in "$root"/e2e/build/*/; do
	mod="$dir/go.mod"
	[[ -f $mod ]] || continue
	own=$(cd "$dir" && GOWORK=off go mod edit -json | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(m["Module"]["Path"])')
	# The module's build list without the pins, so a pin never pins itself.
	tmp=$(mktemp -d)
	sed "/^$(printf '%s' "$begin" | sed 's/[][\/.*^$]/\\&/g')\$/,/^$(printf '%s' "$end" | sed 's/[][\/.*^$]/\\&/g')\$/d" "$mod" >"$tmp/go.mod"
	cp "$dir/go.sum" "$tmp/go.sum"
	cp "$dir"/*.go "$tmp/" 2>/dev/null || true
	list=$(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod go list -m -f '{{.Path}} {{.Version}}' all 2>/dev/null | awk -v own="$own" 'NF == 2 && $1 != own' | sort)
	rm -rf "$tmp"
	block=$(join <(printf '%s\n' "$list") "$reference" | awk '$2 != $3 && $1 !~ /^github.com\/ballast-sched\// { printf "\t%s => %s %s\n", $1, $1, $3 }')
	want=$(mktemp)
	sed "/^$(printf '%s' "$begin" | sed 's/[][\/.*^$]/\\&/g')\$/,/^$(printf '%s' "$end" | sed 's/[][\/.*^$]/\\&/g')\$/d" "$mod" >"$want"
	if [[ -n $block ]]; then
		{ printf '\n%s\nreplace (\n%s\n)\n%s\n' "$begin" "$block" "$end"; } >>"$want"
	fi
	mv "$want" "$mod"
	(cd "$dir" && GOWORK=off go mod tidy)
	echo "pinned $(grep -c ' => ' "$mod" || true) modules in ${mod#$root/}"
done
