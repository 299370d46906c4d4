#!/usr/bin/env bash
# Runs every fuzz target of the given Go modules for a bounded time each.
# `go test -fuzz` takes one package and one target per run, so each target is
# found (go test -list, which honours build tags) in the packages whose tests
# declare a `func Fuzz…`, and run on its own. A failing input is saved under the
# package's testdata/fuzz/<target>/, where plain `go test` replays it from then on.
# FUZZMINIMIZETIME (default 1s) bounds how long each new input is minimised: Go's
# default, 60s, lets a target whose inputs are large and slow (a whole chart's
# values) spend a short run minimising instead of fuzzing.
#
#   hack/fuzz.sh FUZZTIME MODULE...     e.g. hack/fuzz.sh 10s load-watcher scheduler
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 FUZZTIME MODULE..." >&2; exit 2; }
fuzztime=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
minimize=${FUZZMINIMIZETIME:-1s}

count=0
start=$SECONDS
for m in "$@"; do
	# The module's own packages only (a nested module, like installer/test, is listed apart).
	pkgs=$(cd "$root/$m" && $go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./...)
	while read -r pkg dir; do
		[ -n "$pkg" ] || continue
		grep -qsE '^func Fuzz[A-Za-z0-9_]*\(' "$dir"/*_test.go || continue
		targets=$(cd "$root/$m" && $go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
		for t in $targets; do
			echo "== fuzz $pkg $t ($fuzztime)"
			(cd "$root/$m" && $go test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg") ||
				{ echo "fuzz $pkg $t failed: the input is saved under ${dir#"$root"/}/testdata/fuzz/$t/" >&2; exit 1; }
			count=$((count + 1))
		done
	done <<<"$pkgs"
done
echo "fuzzed $count targets, $fuzztime each, in $((SECONDS - start))s"
