package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// discard is a ResponseWriter that drops the body, so the benchmark
// measures the handler rather than a recorder's buffer.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

var (
	benchMu    sync.Mutex
	benchCache = map[int]*benchSource{}
)

// benchSource serves two rounds of a collector over n nodes holding 15
// minutes of samples (61 rounds at the default period and windows), and
// publishes them in turn: a new round for the API every time, at no
// sampling cost.
type benchSource struct {
	col     *collector.Collector
	rounds  [2]*collector.Round
	current atomic.Int32
	pub     chan struct{}
	clock   func() time.Time
}

func (b *benchSource) Round() *collector.Round    { return b.rounds[b.current.Load()] }
func (b *benchSource) Status() collector.Status   { return b.col.Status() }
func (b *benchSource) Config() collector.Config   { return b.col.Config() }
func (b *benchSource) Published() <-chan struct{} { return b.pub }

// publish makes the other round current and announces it.
func (b *benchSource) publish() {
	b.current.Store(1 - b.current.Load())
	select {
	case b.pub <- struct{}{}:
	default:
	}
}

func newBenchSource(b *testing.B, n int) *benchSource {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if s, ok := benchCache[n]; ok {
		return s
	}
	at := now
	clock := func() time.Time { return at }
	p := static.New(static.WithClock(clock))
	for i := 0; i < n; i++ {
		p.Set(fmt.Sprintf("node-%05d", i), float64(i%100), float64((i*7)%100))
	}
	col, err := collector.New(collector.Config{Provider: p, Nodes: p, Now: clock})
	if err != nil {
		b.Fatal(err)
	}
	s := &benchSource{col: col, pub: make(chan struct{}, 1), clock: clock}
	for r := 0; r < 62; r++ {
		at = at.Add(15 * time.Second)
		if err := col.Collect(context.Background()); err != nil {
			b.Fatal(err)
		}
		// Rounds rebuilt from snapshots carry no versions: every node is
		// encoded again, as when every node has a new sample.
		s.rounds[r%2] = collector.RoundOf(col.Config(), col.Snapshot(), nil)
	}
	benchCache[n] = s
	return s
}

// Benchmark variants of a request for every node:
//
//	cached       the round's answers are encoded (steady state);
//	after-round  a round was just published and the warm loop encodes it
//	             while the request runs (the request is served the previous
//	             round's answers until the new ones are ready);
//	unwarmed     a round was just published and no warm loop runs: the
//	             request encodes the round itself.
//
// ns/op and p99-ms are those of the requests alone.
type variant int

const (
	cached variant = iota
	afterRound
	unwarmed
)

// benchEndpoint serves target b.N times and reports allocations and the
// 99th percentile latency.
func benchEndpoint(b *testing.B, nodes int, target string, v variant) {
	src := newBenchSource(b, nodes)
	h := NewHandler(Options{Source: src, Now: src.clock})
	if v == afterRound {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go h.WarmLoop(ctx)
	}
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req) // encode the current round
	durations := make([]time.Duration, 0, b.N)
	var total time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v != cached {
			src.publish()
		}
		start := time.Now()
		h.ServeHTTP(w, req)
		d := time.Since(start)
		durations = append(durations, d)
		total += d
		if v == afterRound { // let the warm loop finish, as it does between rounds
			for a := h.s.answers.Load(); a == nil || a.from.Value() != src.Round(); a = h.s.answers.Load() {
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(durations[(len(durations)*99)/100].Microseconds())/1000, "p99-ms")
}

var variants = []struct {
	name string
	v    variant
}{{"cached", cached}, {"after-round", afterRound}, {"unwarmed", unwarmed}}

func BenchmarkWatcher(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		for _, v := range variants[:2] { // /watcher keeps no encoding: unwarmed is cached
			b.Run(fmt.Sprintf("nodes=%d/%s", n, v.name), func(b *testing.B) { benchEndpoint(b, n, "/watcher", v.v) })
		}
	}
	b.Run("nodes=5000/host", func(b *testing.B) { benchEndpoint(b, 5000, "/watcher?host=node-04242", cached) })
}

func BenchmarkUsage(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		for _, v := range variants {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, v.name), func(b *testing.B) { benchEndpoint(b, n, "/api/v1/usage", v.v) })
		}
	}
	b.Run("nodes=5000/window", func(b *testing.B) { benchEndpoint(b, 5000, "/api/v1/usage?window=5m", cached) })
	b.Run("nodes=5000/node", func(b *testing.B) { benchEndpoint(b, 5000, "/api/v1/usage?node=node-04242", cached) })
}

// BenchmarkEncodeRound measures what the warm loop does once per round:
// encoding the answers of every node at 5 000 nodes.
func BenchmarkEncodeRound(b *testing.B) {
	src := newBenchSource(b, 5000)
	h := NewHandler(Options{Source: src, Now: src.clock})
	prev := encodeAnswers(src.rounds[1], nil, h.s.windows, h.s.windowNames)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prev = encodeAnswers(src.rounds[i%2], prev, h.s.windows, h.s.windowNames)
	}
}
