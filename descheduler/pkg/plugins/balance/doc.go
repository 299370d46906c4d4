// Package balance is the core Ballast's descheduler plugins share: the
// settings every balance plugin takes (EvictionArgs, with one defaulter and
// one validator), the store of past moves that keeps one plugin from undoing
// another, workloads, reading node load from load-watcher, the load model
// shared with the scheduler, the plugins' metrics and skip reasons, and what
// a plugin needs from outside (Deps).
package balance
