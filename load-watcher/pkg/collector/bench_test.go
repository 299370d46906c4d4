package collector

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// benchCluster returns a collector over n nodes with default windows and
// period, and the static provider and clock driving it.
func benchCluster(b *testing.B, n int) (*Collector, *static.Provider, *fakeClock) {
	b.Helper()
	clock := &fakeClock{t: t0}
	p := static.New(static.WithClock(clock.Now))
	nodes := make(StaticNodes, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		nodes[i] = provider.Node{Name: name,
			Capacity: provider.Quantities{MilliCPU: 8000, MemoryBytes: 32 << 30}, Allocatable: provider.Quantities{MilliCPU: 7800, MemoryBytes: 31 << 30}}
		p.Set(name, float64(i%100), float64((i*7)%100))
	}
	c, err := New(Config{Provider: p, Nodes: nodes, Now: clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	return c, p, clock
}

// BenchmarkIngestRound measures one sampling round at 5 000 nodes with full
// 15-minute buffers: provider answer, sanitizing, ring writes, statistics
// of every window and publishing.
func BenchmarkIngestRound(b *testing.B) {
	c, _, clock := benchCluster(b, 5000)
	for i := 0; i < 61; i++ { // fill 15m at 15s
		clock.Step(15 * time.Second)
		if err := c.Collect(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clock.Step(15 * time.Second)
		if err := c.Collect(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHold15m measures the memory of 15 minutes of samples (61 rounds
// at the default 15 s period) for 5 000 nodes: live heap held by the
// collector after GC (buffers and the published round), the heap an
// in-process caller adds by asking for a Snapshot (its maps are built on
// the first call of each round), and the test process's resident set.
func BenchmarkHold15m(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, held, expanded runtime.MemStats
		runtime.ReadMemStats(&before)
		c, _, clock := benchCluster(b, 5000)
		for r := 0; r < 61; r++ {
			clock.Step(15 * time.Second)
			if err := c.Collect(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&held)
		b.ReportMetric(float64(held.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
		_ = c.Snapshot()
		runtime.GC()
		runtime.ReadMemStats(&expanded)
		b.ReportMetric(float64(expanded.HeapAlloc-held.HeapAlloc)/(1<<20), "snapshot-MiB")
		debug.FreeOSMemory() // return garbage of the filling rounds before reading RSS
		b.ReportMetric(float64(rssBytes())/(1<<20), "rss-MiB")
		runtime.KeepAlive(c)
	}
}

// rssBytes reads the process's resident set from /proc (0 elsewhere).
func rssBytes() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
