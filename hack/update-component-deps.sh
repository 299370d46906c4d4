#!/usr/bin/env bash
# Raises the requirements of the modules Ballast's images are built from
# (each alone, GOWORK=off) to the versions the workspace selects for the tests
# (go.work), so an image and the tests run the same code of every library and
# a build compiles each shared package once (`make images` after `make
# test-all` reuses what the tests compiled). Where a component needs a newer
# version than the workspace, the workspace follows by itself; the other way
# round is what this script fixes. Run it after changing any module's
# dependencies, then hack/update-e2e-build-pins.sh.
#
#   hack/update-component-deps.sh           update the components' go.mod files
#   hack/update-component-deps.sh --verify  fail if one of them lags behind
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
components=(load-watcher scheduler descheduler)
verify=false
[[ ${1:-} == --verify ]] && verify=true

# versions prints "path version" for every module that provides a package the
# module's code or tests compile, the replacement's version where a replace
# directive pins one.
versions() {
	go list -deps -test -f '{{with .Module}}{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}{{end}}' ./... |
		awk 'NF == 2 && $1 !~ /^github.com\/ballast-sched\//' | sort -u
}

# lagging prints "path want" for every module the component compiles at
# another version alone than in the workspace.
lagging() {
	join <(cd "$root/$1" && GOWORK=off versions) <(cd "$root/$1" && versions) | awk '$2 != $3 { print $1, $3 }'
}

status=0
for m in "${components[@]}"; do
	if $verify; then
		lag=$(lagging "$m")
		if [[ -n $lag ]]; then
			echo "$m/go.mod selects other versions than the workspace (run hack/update-component-deps.sh):" >&2
			sed 's/^/  want /' <<<"$lag" >&2
			status=1
		fi
		continue
	fi
	# Raising one requirement can raise others; three rounds reach the fixed point.
	for _ in 1 2 3; do
		lag=$(lagging "$m")
		[[ -z $lag ]] && break
		(cd "$root/$m" && GOWORK=off go get $(awk '{ printf "%s@%s ", $1, $2 }' <<<"$lag"))
	done
	(cd "$root/$m" && GOWORK=off go mod tidy)
	if [[ -n $(lagging "$m") ]]; then
		echo "$m: still differs from the workspace:" >&2
		lagging "$m" >&2
		status=1
	fi
done
exit $status
