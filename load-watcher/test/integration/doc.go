// Package integration tests load-watcher against real parts: a Prometheus
// server started from the `prometheus` binary (Debian package prometheus)
// and, behind the `cluster` build tag, the in-process Kubernetes cluster.
// The tests are skipped by `go test -short`.
package integration
