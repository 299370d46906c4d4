// Package provider defines the one small interface every usage source
// implements (metrics-server, Prometheus, static) and the checks applied to
// whatever a source returns before it reaches the collector's buffers.
package provider
