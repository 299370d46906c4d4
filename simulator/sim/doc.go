// Package sim runs a scenario on the in-process cluster twice, once with the
// upstream kube-scheduler alone and once with Ballast (load-watcher,
// ballast-scheduler and ballast-descheduler), on the same simulated usage,
// and records what each did to every node over simulated time.
//
// Usage is served as metrics.k8s.io NodeMetrics and read by load-watcher's
// real collector and metrics-server provider, so a simulation exercises the
// production code path. Time is simulated: one collector round per scenario
// step, with the clock of the collector, the scheduler's usage tracker and
// the descheduler all set to the simulated time.
package sim
