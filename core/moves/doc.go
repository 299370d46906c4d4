// Package moves is what the descheduler and the scheduler share of the moves
// the descheduler makes: the workload a pod belongs to, and the format of the
// moves the descheduler keeps in its ConfigMap (where each evicted pod was
// expected to go, where its replacement landed) and of its plan (Rebalance).
// The descheduler writes them; the scheduler reads them to place a
// replacement where it was planned, and `ballast explain` to say why.
package moves
