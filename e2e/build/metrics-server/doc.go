// Package metricsserver pins the metrics-server release the end-to-end lane
// runs: go.mod's tool directive names sigs.k8s.io/metrics-server's command,
// and `make e2e-bins` builds it statically from this module, outside go.work
// because metrics-server pins its own Kubernetes patch release.
package metricsserver
