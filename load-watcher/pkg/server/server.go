// Package server serves load-watcher's HTTP API on a private mux: the
// paypal/load-watcher compatible /watcher, the richer /api/v1/usage, health
// and readiness probes and /metrics. The caller owns the http.Server.
package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	apiv1 "github.com/ballast-sched/ballast/load-watcher/pkg/api/v1"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// Paths served by the handler.
const (
	WatcherPath       = "/watcher"
	WatcherHealthPath = "/watcher/health"
	HealthzPath       = "/healthz"
	ReadyzPath        = "/readyz"
	MetricsPath       = "/metrics"
	UsagePath         = apiv1.Path
)

// Source is what the API serves: a collector, or anything shaped like one.
type Source interface {
	Snapshot() *usage.Snapshot
	Status() collector.Status
	Config() collector.Config
}

// Options configures the handler.
type Options struct {
	// Source provides usage. Required.
	Source Source
	// Gatherer backs /metrics; /metrics answers 404 when nil.
	Gatherer prometheus.Gatherer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

type server struct {
	src        Source
	now        func() time.Time
	windows    []usage.Window
	compat     usage.Window
	period     time.Duration
	staleAfter time.Duration
	fragments  *fragmentCache
}

// NewHandler returns the API on a fresh mux.
func NewHandler(opts Options) http.Handler {
	cfg := opts.Source.Config()
	s := &server{
		src:        opts.Source,
		now:        opts.Now,
		windows:    sortedWindows(cfg.Windows),
		period:     cfg.Period,
		staleAfter: cfg.StaleAfter,
		fragments:  newFragmentCache(),
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.compat = compatWindow(s.windows)
	mux := http.NewServeMux()
	mux.HandleFunc(WatcherPath, getOnly(s.watcher))
	mux.HandleFunc(WatcherHealthPath, getOnly(s.watcherHealth))
	mux.HandleFunc(HealthzPath, getOnly(s.healthz))
	mux.HandleFunc(ReadyzPath, getOnly(s.readyz))
	mux.HandleFunc(UsagePath, getOnly(s.usage))
	if opts.Gatherer != nil {
		mux.Handle(MetricsPath, promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NotFound", "no such endpoint: "+r.URL.Path)
	})
	return recoverPanics(mux)
}

// compatWindow is the window /watcher reports: 15m as upstream, else the
// longest configured one.
func compatWindow(windows []usage.Window) usage.Window {
	for _, w := range windows {
		if w == usage.Window15m {
			return w
		}
	}
	return windows[len(windows)-1]
}

func sortedWindows(ws []usage.Window) []usage.Window {
	out := append([]usage.Window(nil), ws...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
