// Package integration runs ballast-descheduler against a real control plane:
// the in-process cluster (kube-apiserver, ReplicaSet, Deployment and
// disruption controllers, simulated kubelets), the real ballast-scheduler,
// and load-watcher's collector fed with controlled usage. The tests are
// slow and skipped by `go test -short`.
package integration
