#!/usr/bin/env bash
# Regenerates docs/cli.md, the ballast CLI's command reference, from the commands themselves.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/installer"
go test ./pkg/cmd/ballast -run '^TestCLIReference$' -count=1 -update
