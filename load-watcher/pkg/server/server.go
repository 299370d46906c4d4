// Package server serves load-watcher's HTTP API on a private mux: the
// paypal/load-watcher compatible /watcher, the richer /api/v1/usage, health
// and readiness probes and /metrics. The caller owns the http.Server.
package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
	"weak"

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
	src         Source
	now         func() time.Time
	windows     []usage.Window
	compat      usage.Window
	compatName  string   // compat.String(), formatted once
	windowNames []string // windows' String forms
	period      time.Duration
	staleAfter  time.Duration
	fragments   *fragmentCache

	namesMu sync.Mutex
	// namesSnap is weak so the cache does not keep an old snapshot, and
	// with it a whole generation of statistics, alive.
	namesSnap weak.Pointer[usage.Snapshot]
	all       []string // sorted names of namesSnap's nodes
	fresh     []string // sorted names of its nodes that are not stale
}

// sortedNames returns the sorted node names of snap, all and fresh ones,
// computed once per snapshot: sorting 5 000 names per request would cost
// more than the rest of a cached answer.
func (s *server) sortedNames(snap *usage.Snapshot) (all, fresh []string) {
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	if snap != s.namesSnap.Value() {
		s.all = make([]string, 0, len(snap.Nodes))
		for name := range snap.Nodes {
			s.all = append(s.all, name)
		}
		slices.Sort(s.all)
		s.fresh = make([]string, 0, len(s.all))
		for _, name := range s.all {
			if !snap.Nodes[name].Stale {
				s.fresh = append(s.fresh, name)
			}
		}
		s.namesSnap = weak.Make(snap)
	}
	return s.all, s.fresh
}

// Handler serves the API. Run WarmLoop beside it to encode fresh
// statistics off the request path.
type Handler struct {
	http.Handler
	s *server
}

// warmInterval is how often WarmLoop looks for a new snapshot.
const warmInterval = 250 * time.Millisecond

// publisher is implemented by sources that announce new statistics.
type publisher interface {
	Published() <-chan struct{}
}

// WarmLoop encodes every node's statistics right after each sampling round
// (or within warmInterval for sources that do not announce rounds), until
// ctx ends, so that requests only copy cached bytes: without it the first
// request after a round encodes all nodes itself.
func (h *Handler) WarmLoop(ctx context.Context) {
	t := time.NewTicker(warmInterval)
	defer t.Stop()
	var announced <-chan struct{}
	if p, ok := h.s.src.(publisher); ok {
		announced = p.Published()
	}
	var last weak.Pointer[usage.Snapshot] // weak: do not pin old statistics
	for {
		if snap := h.s.src.Snapshot(); snap != nil && snap != last.Value() {
			h.s.warm(snap)
			last = weak.Make(snap)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-announced:
		}
	}
}

// warm encodes the fragments of /api/v1/usage's default answer. /watcher
// needs no cache: six numbers per node format faster than a lookup costs.
func (s *server) warm(snap *usage.Snapshot) {
	all, _ := s.sortedNames(snap)
	s.fragments.refresh(all, snap.Nodes, kindUsage, func(n usage.NodeUsage) ([]byte, error) { return encodeUsage(n, s.windows, s.windowNames) })
}

// kindUsage is the fragment kind of /api/v1/usage with every window.
const kindUsage = "usage"

// NewHandler returns the API on a fresh mux.
func NewHandler(opts Options) *Handler {
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
	s.compatName = s.compat.String()
	s.windowNames = windowNames(s.windows)
	mux := http.NewServeMux()
	mux.HandleFunc(WatcherPath, getOnly(s.watcher))
	mux.HandleFunc(WatcherHealthPath, getOnly(s.watcherHealth))
	mux.HandleFunc(HealthzPath, getOnly(s.healthz))
	mux.HandleFunc(ReadyzPath, getOnly(s.readyz))
	mux.HandleFunc(UsagePath, getOnly(s.usage))
	if opts.Gatherer != nil {
		mux.Handle(MetricsPath, promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/", notFound)
	return &Handler{Handler: recoverPanics(mux), s: s}
}

// NewMetricsHandler serves only /metrics from g: the handler of a metrics
// port kept apart from the API, so that a NetworkPolicy can open one to
// Prometheus without opening the other.
func NewMetricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", notFound)
	return recoverPanics(mux)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "NotFound", "no such endpoint: "+r.URL.Path)
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
