// Package client gives the scheduler, the descheduler and `ballast status`
// node usage from a load-watcher server:
//
//	Snapshot() *usage.Snapshot // latest, never blocks; nil before the first
//
// Client polls a load-watcher server's /api/v1/usage in the background with
// timeouts and backoff; Fetch asks it once. Package inprocess runs the
// collector inside the caller's process (library mode) without any HTTP
// server and offers the same Snapshot. In both, each node's Stale flag is
// evaluated against the caller's threshold when Snapshot is called, so a
// caller that lost its source sees nodes turn stale and falls back instead
// of trusting old numbers.
package client
