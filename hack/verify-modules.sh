#!/usr/bin/env bash
# Fails when a module's go.mod or go.sum would change: each module of go.work,
# and each program outside it that consumes Ballast's modules
# (test/consumers/*), must be tidy on its own (GOWORK=off, as someone who
# requires it alone builds it), and `go work sync` must change nothing, so
# every module lists the versions the workspace builds with; core,
# load-watcher, scheduler and descheduler must build alone. The versions
# themselves are held equal across modules by hack/verify-layers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

dirs=$(go work edit -json | sed -n 's/^[[:space:]]*"DiskPath": "\.\/\(.*\)"$/\1/p')
consumers=$(ls -d test/consumers/*/ 2>/dev/null | sed 's#/$##' || true)
status=0
for dir in $dirs $consumers; do
	if ! (cd "$dir" && GOWORK=off go mod tidy -diff >/dev/null 2>&1); then
		echo "$dir/go.mod is not tidy: (cd $dir && GOWORK=off go mod tidy)" >&2
		status=1
	fi
done

# The ground floor and the three components build alone, as a program of
# someone else's that requires one of them builds it.
for dir in core load-watcher scheduler descheduler; do
	if ! (cd "$dir" && GOWORK=off go build ./... 2>&1); then
		echo "$dir does not build alone: (cd $dir && GOWORK=off go build ./...)" >&2
		status=1
	fi
done

# go work sync rewrites the modules' go.mod files in place: keep them, sync,
# compare, put them back.
keep=$(mktemp -d)
trap 'for d in $dirs; do for f in go.mod go.sum; do [ -f "$keep/$d/$f" ] && cp "$keep/$d/$f" "$d/$f"; done; done; rm -rf "$keep"' EXIT
for d in $dirs; do
	mkdir -p "$keep/$d"
	cp "$d/go.mod" "$keep/$d/go.mod"
	[ -f "$d/go.sum" ] && cp "$d/go.sum" "$keep/$d/go.sum"
done
go work sync
for d in $dirs; do
	if ! cmp -s "$d/go.mod" "$keep/$d/go.mod"; then
		echo "go work sync would change $d/go.mod:" >&2
		diff -u "$keep/$d/go.mod" "$d/go.mod" >&2 || true
		status=1
	fi
done
exit $status
