#!/usr/bin/env bash
# Regenerates docs/values.md from the "# --" comments in charts/ballast/values.yaml.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/charts"
go run ./internal/cmd/gen-values-doc ballast/values.yaml "$root/docs/values.md"
