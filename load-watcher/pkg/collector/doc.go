// Package collector samples a usage provider on a period into a bounded
// ring buffer per node and derives windowed statistics (avg, std, max, p95,
// latest) from it. It is the core of the load-watcher server and also runs
// in-process (library mode): Snapshot is the same method the HTTP client
// offers.
package collector
