// Package record is what is observed of a run: the pods after each change
// (evictions, ping-pong, pods placed on a hogged node), every node's pods,
// requests and real usage at every step, the nodes over thresholds at each
// descheduling cycle, and the summary of a run (Result) or of a live
// cluster (Placement); and the comparison of runs. It reads the cluster it
// is given and the usage model, and runs nothing.
package record
