#!/usr/bin/env bash
# Runs every fuzz target of the workspace's packages for a bounded time each.
# `go test -fuzz` takes one package and one target per run, so each target is
# found (go test -list, which honours build tags) in the packages whose tests
# declare a `func Fuzz…`, and run on its own. A failing input is saved under the
# package's testdata/fuzz/<target>/, where plain `go test` replays it from then on.
# FUZZMINIMIZETIME (default 1s) bounds how long each new input is minimised: Go's
# default, 60s, lets a target whose inputs are large and slow (a whole chart's
# values) spend a short run minimising instead of fuzzing.
#
# Go before 1.27 can fail a run with a bare "context deadline exceeded" as
# -fuzztime ends (https://go.dev/issue/75804), with no failing input: such a
# run is reported as that and does not fail the whole; any run that saves an
# input, or fails another way, does.
#
#   hack/fuzz.sh FUZZTIME [PACKAGE...]   e.g. hack/fuzz.sh 10s ./load-watcher/... (default: every module of go.work)
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 FUZZTIME [PACKAGE...]" >&2; exit 2; }
fuzztime=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
minimize=${FUZZMINIMIZETIME:-1s}

count=0
raced=0
start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
patterns=("$@")
cd "$root"
[ ${#patterns[@]} -gt 0 ] || mapfile -t patterns < <($go list -m -f '{{.Path}}/...')
pkgs=$($go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${patterns[@]}")
while read -r pkg dir; do
	[ -n "$pkg" ] || continue
	grep -qsE '^func Fuzz[A-Za-z0-9_]*\(' "$dir"/*_test.go || continue
	targets=$($go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for t in $targets; do
		echo "== fuzz $pkg $t ($fuzztime)"
		corpus="$dir/testdata/fuzz/$t"
		before=$(ls "$corpus" 2>/dev/null || true)
		if $go test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" 2>&1 | tee "$log"; then
			count=$((count + 1))
			continue
		fi
		if [ "$(ls "$corpus" 2>/dev/null || true)" != "$before" ]; then
			echo "fuzz $pkg $t failed: the failing input is saved under ${corpus#"$root"/}/" >&2
			exit 1
		fi
		if [ "$(grep -c -- '--- FAIL' "$log")" = 1 ] && grep -q '^    context deadline exceeded$' "$log"; then
			echo "fuzz $pkg $t: Go's fuzzing stopped with \"context deadline exceeded\" and no failing input (go.dev/issue/75804); not a finding" >&2
			raced=$((raced + 1))
			count=$((count + 1))
			continue
		fi
		echo "fuzz $pkg $t failed" >&2
		exit 1
	done
done <<<"$pkgs"
summary="fuzzed $count targets, $fuzztime each, in $((SECONDS - start))s"
[ "$raced" -eq 0 ] || summary+=" ($raced stopped early by go.dev/issue/75804)"
echo "$summary"
