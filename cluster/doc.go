// Package cluster runs a real Kubernetes control plane inside the calling
// process: embedded etcd, kube-apiserver, the controllers Ballast relies on
// (Deployment, ReplicaSet, DaemonSet, StatefulSet, persistent volume, Job,
// disruption), a local-path provisioner like k3s's behind the default
// StorageClass, optionally the real kube-scheduler with out-of-tree
// plugins, and simulated nodes whose kubelet stand-in moves bound pods to
// Running and ends the runs of pods that run to completion.
//
// Tests use it to exercise Ballast against the same API server and scheduler
// a cluster runs; the demo and the simulator use it to run scenarios without
// k3s or any network. Nothing is downloaded: every part is built from Go
// modules.
package cluster
