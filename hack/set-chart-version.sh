#!/usr/bin/env bash
# Sets the version and appVersion of the ballast chart and its subcharts (and the
# umbrella's dependency pins) to one release version, e.g. hack/set-chart-version.sh 0.2.0
set -euo pipefail
version=${1#v}
root=$(cd "$(dirname "$0")/.." && pwd)
for chart in "$root"/charts/ballast/Chart.yaml "$root"/charts/ballast/charts/*/Chart.yaml; do
	sed -i -E \
		-e "s/^version: .*/version: ${version}/" \
		-e "s/^appVersion: .*/appVersion: \"${version}\"/" \
		-e "s/^(    version:) .*/\1 ${version}/" \
		"$chart"
done
