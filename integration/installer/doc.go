// Package integration runs the chart and the installer against the in-process
// cluster of simulator/cluster: a real kube-apiserver with RBAC, the
// Deployment controllers, a kubelet stand-in and the real kube-scheduler.
// The tests start a control plane each and are skipped with -short.
package integration
