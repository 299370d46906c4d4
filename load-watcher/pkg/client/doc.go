// Package client gives the scheduler and descheduler node usage from
// load-watcher, in two modes with the same method:
//
//	Snapshot() *usage.Snapshot // latest, never blocks; nil before the first
//
// Client polls a load-watcher server's /api/v1/usage in the background with
// timeouts and backoff. InProcess runs the collector inside the caller's
// process (library mode) without any HTTP server. In both, each node's
// Stale flag is evaluated against the caller's threshold when Snapshot is
// called, so a caller that lost its source sees nodes turn stale and falls
// back instead of trusting old numbers.
package client
