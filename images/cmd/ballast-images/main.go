// Command ballast-images cross-compiles Ballast's three components and
// builds their multi-platform images without a container engine: OCI
// layouts, per-platform air-gap archives for k3s, and optionally a push.
// `make images` runs it; see docs/images.md.
package main

import "github.com/ballast-sched/ballast/images/cmd/ballast-images/app"

func main() { app.Main() }
