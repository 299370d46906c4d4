#!/usr/bin/env bash
# Sets the version and appVersion of the ballast chart and its subcharts (and the
# umbrella's dependency pins) to one release version and, when given, the
# registry of its images (global.image.registry), before a release is built:
#
#   hack/set-chart-version.sh 0.2.0
#   hack/set-chart-version.sh 0.2.0 ghcr.io/someone   # a fork's release pulls the fork's images
#
# The binaries embed the chart, so `make release` refuses a version or a
# registry the tree does not carry.
set -euo pipefail
version=${1#v}
registry=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
for chart in "$root"/charts/ballast/Chart.yaml "$root"/charts/ballast/charts/*/Chart.yaml; do
	sed -i -E \
		-e "s/^version: .*/version: ${version}/" \
		-e "s/^appVersion: .*/appVersion: \"${version}\"/" \
		-e "s/^(    version:) .*/\1 ${version}/" \
		"$chart"
done
if [ -n "$registry" ]; then
	values="$root/charts/ballast/values.yaml"
	[ "$(grep -c '^    registry: ' "$values")" -eq 1 ] || { echo "$values: want exactly one global.image.registry line" >&2; exit 1; }
	sed -i -E "s|^(    registry:) .*|\1 ${registry%/}|" "$values"
fi
