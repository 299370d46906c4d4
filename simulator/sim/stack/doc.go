// Package stack is what a simulation drives: a scenario's in-process
// cluster with its nodes and workloads, the usage model served as
// metrics.k8s.io, load-watcher's real collector reading it, the chosen
// scheduler (kube-scheduler's default profile, or Ballast's with its
// plugins) and, optionally, the descheduler with Ballast's plugins, run a
// cycle at a time; and the upstream load-aware peer's kube-scheduler as a
// process of its own. A run on the simulated clock and a cluster served in
// real time drive the same Stack.
package stack
