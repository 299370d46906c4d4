// Package podusage knows what running pods really use: it reads their
// PodMetrics from metrics.k8s.io (metrics-server, which k3s ships) and
// estimates a pod that has not run yet by what its siblings — the running
// pods of the same controller — use.
//
// A pod's requests say little about its usage (a worker asking for 50m may
// use a whole core); the pods of one ReplicaSet, StatefulSet or Job run the
// same template and use much the same, so once some of them run, their
// measured usage is the better estimate for the next one: a new replica, or
// the replacement of a pod the descheduler moved.
package podusage
