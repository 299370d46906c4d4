// Package server serves load-watcher's HTTP API on a private mux: the
// paypal/load-watcher compatible /watcher, the richer /api/v1/usage, health
// and readiness probes and /metrics. The caller owns the http.Server.
package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
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

// Source is what the API serves: a collector, or anything shaped like one
// (collector.RoundOf turns a snapshot into a Round).
type Source interface {
	// Round returns the latest statistics; nil before there are any.
	Round() *collector.Round
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
	// epoch tells this server's rounds from another process's: the
	// entity tags of /api/v1/usage carry it with the round's number.
	epoch string

	// answers is what /api/v1/usage serves: the newest round encoded.
	answers  atomic.Pointer[answers]
	encodeMu sync.Mutex // one encoding at a time
	// warmLoops counts running WarmLoops: while one runs, requests leave
	// encoding to it.
	warmLoops atomic.Int32
}

// current returns the answers to serve: those of the source's latest
// round or, while a warm loop is still encoding that round, those of the
// previous one, whole — a request never waits for nor repeats the warm
// loop's work. Without a warm loop the first request after a round encodes
// it. nil before the source has a round.
func (s *server) current() *answers {
	r := s.src.Round()
	if r == nil {
		return nil
	}
	if a := s.answers.Load(); a != nil && (a.from.Value() == r || s.warmLoops.Load() > 0) {
		return a
	}
	return s.encode(r)
}

// encode makes r's answers current, unless those of r or of a newer round
// already are, and returns the current answers.
func (s *server) encode(r *collector.Round) *answers {
	s.encodeMu.Lock()
	defer s.encodeMu.Unlock()
	prev := s.answers.Load()
	if prev != nil && (prev.from.Value() == r || prev.nodes.Seq() > r.Seq()) {
		return prev
	}
	a := encodeAnswers(r, prev, s.windows, s.windowNames)
	s.answers.Store(a)
	return a
}

// Handler serves the API. Run WarmLoop beside it to encode fresh
// statistics off the request path.
type Handler struct {
	http.Handler
	s *server
}

// warmInterval is how often WarmLoop looks for a new round.
const warmInterval = 250 * time.Millisecond

// publisher is implemented by sources that announce new rounds.
type publisher interface {
	Published() <-chan struct{}
}

// WarmLoop encodes each round's answers as soon as the round is published
// (or within warmInterval for sources that do not announce rounds), until
// ctx ends. Meanwhile requests are served the previous round's answers, so
// no request encodes a round: without WarmLoop the first request after
// each round does.
func (h *Handler) WarmLoop(ctx context.Context) {
	h.s.warmLoops.Add(1)
	defer h.s.warmLoops.Add(-1)
	t := time.NewTicker(warmInterval)
	defer t.Stop()
	var announced <-chan struct{}
	if p, ok := h.s.src.(publisher); ok {
		announced = p.Published()
	}
	for {
		if r := h.s.src.Round(); r != nil {
			h.s.encode(r)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-announced:
		}
	}
}

// NewHandler returns the API on a fresh mux.
func NewHandler(opts Options) *Handler {
	cfg := opts.Source.Config()
	s := &server{
		src:        opts.Source,
		now:        opts.Now,
		windows:    sortedWindows(cfg.Windows),
		period:     cfg.Period,
		staleAfter: cfg.StaleAfter,
		epoch:      strconv.FormatInt(time.Now().UnixNano(), 36),
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
