// Package usage is Ballast's model of real node usage: per-node statistics of
// CPU and memory utilisation over sliding windows, as load-watcher collects
// them and as the scheduler and descheduler consume them.
//
// Values are percentages of a node's allocatable resources (0–100; a node can
// briefly exceed 100 when it runs over its allocatable). A node without a
// sample is absent from a Snapshot, never reported as 0 %.
package usage
