// Package sim runs a scenario on the in-process cluster twice, once with the
// upstream kube-scheduler alone and once with Ballast (load-watcher,
// ballast-scheduler and ballast-descheduler), on the same simulated usage,
// and records what each did to every node over simulated time. Serve keeps a
// scenario's cluster running in real time instead, for kubectl and other
// schedulers, and Report measures the placement on it.
//
// Usage is served as metrics.k8s.io NodeMetrics and read by load-watcher's
// real collector and metrics-server provider, so a simulation exercises the
// production code path. In a run time is simulated: one collector round per
// scenario step, with the clock of the collector, the scheduler's usage
// tracker and the descheduler all set to the simulated time. A served
// cluster samples on the real clock; only the scenario's usage and events
// may run faster.
package sim
