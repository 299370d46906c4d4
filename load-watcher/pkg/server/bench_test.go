package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
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
	benchCache = map[int]*collector.Collector{}
)

// benchSource is a collector over n nodes holding 15 minutes of samples.
func benchSource(b *testing.B, n int) *collector.Collector {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if c, ok := benchCache[n]; ok {
		return c
	}
	at := now
	p := static.New(static.WithClock(func() time.Time { return at }))
	for i := 0; i < n; i++ {
		p.Set(fmt.Sprintf("node-%05d", i), float64(i%100), float64((i*7)%100))
	}
	c, err := collector.New(collector.Config{Provider: p, Nodes: p, Now: func() time.Time { return at }})
	if err != nil {
		b.Fatal(err)
	}
	for r := 0; r < 61; r++ {
		at = at.Add(15 * time.Second)
		if err := c.Collect(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	benchCache[n] = c
	return c
}

// benchEndpoint serves target b.N times and reports allocations and the
// 99th percentile latency. cold builds a fresh handler per request: every
// node's statistics are encoded again, as on the first request after a
// sampling round refreshed all nodes.
func benchEndpoint(b *testing.B, nodes int, target string, cold bool) {
	src := benchSource(b, nodes)
	clock := func() time.Time { return now.Add(61 * 15 * time.Second) }
	var h http.Handler = NewHandler(Options{Source: src, Now: clock})
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req) // warm the fragment cache
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			h = NewHandler(Options{Source: src, Now: clock})
		}
		start := time.Now()
		h.ServeHTTP(w, req)
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[(len(durations)*99)/100].Microseconds())/1000, "p99-ms")
}

func BenchmarkWatcher(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d/cached", n), func(b *testing.B) { benchEndpoint(b, n, "/watcher", false) })
		b.Run(fmt.Sprintf("nodes=%d/cold", n), func(b *testing.B) { benchEndpoint(b, n, "/watcher", true) })
	}
	b.Run("nodes=5000/host", func(b *testing.B) { benchEndpoint(b, 5000, "/watcher?host=node-04242", false) })
}

func BenchmarkUsage(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d/cached", n), func(b *testing.B) { benchEndpoint(b, n, "/api/v1/usage", false) })
		b.Run(fmt.Sprintf("nodes=%d/cold", n), func(b *testing.B) { benchEndpoint(b, n, "/api/v1/usage", true) })
	}
	b.Run("nodes=5000/node", func(b *testing.B) { benchEndpoint(b, 5000, "/api/v1/usage?node=node-04242", false) })
}
