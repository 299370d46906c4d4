package collector

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mutableNodes is a node source tests add to and delete from.
type mutableNodes struct {
	mu    sync.Mutex
	nodes []provider.Node
}

func (m *mutableNodes) Nodes() ([]provider.Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]provider.Node(nil), m.nodes...), nil
}

func (m *mutableNodes) set(names ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes = nil
	for _, n := range names {
		m.nodes = append(m.nodes, provider.Node{Name: n})
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func newTestCollector(t *testing.T, nodes NodeSource, windows ...usage.Window) (*Collector, *static.Provider, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: t0}
	p := static.New(static.WithClock(clock.Now))
	c, err := New(Config{Provider: p, Nodes: nodes, Period: 15 * time.Second, Windows: windows, Now: clock.Now})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, p, clock
}

func collect(t *testing.T, c *Collector) {
	t.Helper()
	if err := c.Collect(context.Background()); err != nil {
		t.Fatalf("Collect: %v", err)
	}
}

func TestWindowStatistics(t *testing.T) {
	c, p, clock := newTestCollector(t, StaticNodes{{Name: "a"}}, usage.Window1m, usage.Window5m)
	// Six rounds 15 s apart, CPU 10..60, memory always 50.
	for i, cpu := range []float64{10, 20, 30, 40, 50, 60} {
		if i > 0 {
			clock.Step(15 * time.Second)
		}
		p.Set("a", cpu, 50)
		collect(t, c)
	}
	got, ok := c.Snapshot().Node("a")
	if !ok {
		t.Fatalf("node a: no fresh usage")
	}
	want := usage.NodeUsage{
		Node:       "a",
		SampleTime: t0.Add(75 * time.Second),
		Windows: map[usage.Window]map[usage.Resource]usage.Stats{
			// 1m holds samples newer than 75s−60s = 15s: 30, 40, 50, 60.
			// avg 45; deviations ∓15, ∓5 → 500/4 = 125, std √125 ≈ 11.1803.
			usage.Window1m: {
				usage.CPU:    {Avg: 45, Std: 11.180339887498949, Max: 60, P95: 60, Latest: 60, Samples: 4},
				usage.Memory: {Avg: 50, Std: 0, Max: 50, P95: 50, Latest: 50, Samples: 4},
			},
			// 5m holds all six: avg 35; (625+225+25)·2/6 = 291.67, std ≈ 17.0783.
			usage.Window5m: {
				usage.CPU:    {Avg: 35, Std: 17.07825127659933, Max: 60, P95: 60, Latest: 60, Samples: 6},
				usage.Memory: {Avg: 50, Std: 0, Max: 50, P95: 50, Latest: 50, Samples: 6},
			},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("usage of a (-want,+got):\n%s", diff)
	}
}

func TestBoundedMemory(t *testing.T) {
	c, p, clock := newTestCollector(t, StaticNodes{{Name: "a"}}, usage.Window1m)
	for i := 0; i < 100; i++ {
		clock.Step(15 * time.Second)
		p.Set("a", float64(i), 1)
		collect(t, c)
	}
	// 1m at 15s: 4 points, plus 2 slack → buffer of 6, never more.
	if got := len(c.series["a"].ring.pts); got != 6 {
		t.Errorf("ring capacity = %d, want 6", got)
	}
	u, _ := c.Snapshot().Node("a")
	if got := u.Windows[usage.Window1m][usage.CPU]; got.Samples != 4 || got.Latest != 99 {
		t.Errorf("1m cpu = %+v, want 4 samples, latest 99", got)
	}
}

func TestRepeatedSampleTimeIsStoredOnce(t *testing.T) {
	// metrics-server refreshes less often than we sample: the same sample
	// must not be counted twice, or the std would shrink.
	c, p, _ := newTestCollector(t, StaticNodes{{Name: "a"}}, usage.Window1m)
	p.Set("a", 10, 10)
	collect(t, c)
	p.Set("a", 90, 90) // same clock: same sample time
	collect(t, c)
	u, _ := c.Snapshot().Node("a")
	if got := u.Windows[usage.Window1m][usage.CPU]; got.Samples != 1 || got.Latest != 10 {
		t.Errorf("1m cpu = %+v, want the first sample only", got)
	}
}

func TestSanitizeDropsAndClamps(t *testing.T) {
	nodes := StaticNodes{
		// Capacity 4 cores, allocatable 3.2 → ceiling 125 %.
		{Name: "a", Capacity: provider.Quantities{MilliCPU: 4000, MemoryBytes: 100}, Allocatable: provider.Quantities{MilliCPU: 3200, MemoryBytes: 100}},
		{Name: "b"},
		{Name: "c"},
	}
	c, p, _ := newTestCollector(t, nodes, usage.Window1m)
	p.Set("a", 500, 50)         // cpu over capacity → clamped to 125
	p.Set("b", math.NaN(), -3)  // both dropped → node has no sample
	p.Set("c", 20, math.Inf(1)) // memory dropped, cpu kept
	collect(t, c)

	snap := c.Snapshot()
	if got := snap.Nodes["a"].Windows[usage.Window1m][usage.CPU].Latest; got != 125 {
		t.Errorf("a cpu = %v, want clamped to 125", got)
	}
	if _, ok := snap.Nodes["b"]; ok {
		t.Errorf("b: got usage, want none (every value was invalid)")
	}
	if _, ok := snap.Nodes["c"].Get(usage.Window1m, usage.Memory); ok {
		t.Errorf("c memory: got stats, want none")
	}
	if got := snap.Nodes["c"].Windows[usage.Window1m][usage.CPU].Latest; got != 20 {
		t.Errorf("c cpu = %v, want 20", got)
	}
	for _, tc := range []struct {
		resource, reason string
		want             float64
	}{
		{"cpu", "over_capacity", 1},
		{"cpu", "nan", 1},
		{"memory", "negative", 1},
		{"memory", "nan", 1},
		{"memory", "over_capacity", 0},
	} {
		if got := testutil.ToFloat64(c.metrics.rejected.WithLabelValues(tc.resource, tc.reason)); got != tc.want {
			t.Errorf("rejected{%s,%s} = %v, want %v", tc.resource, tc.reason, got, tc.want)
		}
	}
	if diff := cmp.Diff([]string{"b"}, c.Status().NodesWithoutSamples); diff != "" {
		t.Errorf("nodes without samples (-want,+got):\n%s", diff)
	}
}

func TestNodesComeAndGo(t *testing.T) {
	nodes := &mutableNodes{}
	nodes.set("a", "b")
	c, p, clock := newTestCollector(t, nodes, usage.Window1m)
	p.Set("a", 10, 10)
	p.Set("b", 20, 20)
	p.Set("c", 30, 30) // known to the source, not (yet) a cluster node
	collect(t, c)
	if diff := cmp.Diff([]string{"a", "b"}, nodeNames(c.Snapshot())); diff != "" {
		t.Errorf("first round nodes (-want,+got):\n%s", diff)
	}

	nodes.set("a", "c") // b deleted, c added
	c.Prune()
	if diff := cmp.Diff([]string{"a"}, nodeNames(c.Snapshot())); diff != "" {
		t.Errorf("after prune (-want,+got):\n%s", diff)
	}
	clock.Step(15 * time.Second)
	collect(t, c)
	if diff := cmp.Diff([]string{"a", "c"}, nodeNames(c.Snapshot())); diff != "" {
		t.Errorf("after next round (-want,+got):\n%s", diff)
	}
}

func nodeNames(s *usage.Snapshot) []string {
	if s == nil {
		return nil
	}
	var out []string
	for n := range s.Nodes {
		out = append(out, n)
	}
	return sortStrings(out)
}

func TestProviderOutageKeepsDataMarkedStale(t *testing.T) {
	c, p, clock := newTestCollector(t, StaticNodes{{Name: "a"}}, usage.Window1m)
	if st := c.Status(); st.Ready {
		t.Fatalf("ready before any sample")
	}
	if c.Snapshot() != nil {
		t.Fatalf("snapshot before any sample: want nil")
	}
	p.Set("a", 40, 40)
	collect(t, c)
	if st := c.Status(); !st.Ready {
		t.Fatalf("not ready after a good round: %s", st.Reason)
	}

	p.SetError(errors.New("connection refused"))
	clock.Step(15 * time.Second)
	if err := c.Collect(context.Background()); err == nil {
		t.Fatalf("Collect during outage: want error")
	}
	// 15s old: within the 45s threshold, still fresh and ready.
	if _, ok := c.Snapshot().Node("a"); !ok {
		t.Errorf("15s into outage: node a stale, want fresh")
	}
	clock.Step(31 * time.Second) // 46s since the sample
	snap := c.Snapshot()
	if n := snap.Nodes["a"]; !n.Stale || n.Windows[usage.Window1m][usage.CPU].Latest != 40 {
		t.Errorf("46s into outage: got %+v, want last data kept and stale", n)
	}
	if st := c.Status(); st.Ready || st.LastError == nil {
		t.Errorf("46s into outage: status %+v, want not ready with the error", st)
	}
	if got := testutil.ToFloat64(c.metrics.providerErrors); got != 1 {
		t.Errorf("provider errors = %v, want 1", got)
	}

	p.SetError(nil)
	collect(t, c)
	if _, ok := c.Snapshot().Node("a"); !ok {
		t.Errorf("after recovery: node a stale, want fresh")
	}
	if st := c.Status(); !st.Ready {
		t.Errorf("after recovery: not ready: %s", st.Reason)
	}
}

func TestSnapshotReusedUntilStalenessChanges(t *testing.T) {
	c, p, clock := newTestCollector(t, StaticNodes{{Name: "a"}}, usage.Window1m)
	p.Set("a", 1, 1)
	collect(t, c)
	first := c.Snapshot()
	clock.Step(10 * time.Second)
	if c.Snapshot() != first {
		t.Errorf("nothing changed: want the cached snapshot")
	}
	clock.Step(40 * time.Second)
	if got := c.Snapshot(); got == first || !got.Nodes["a"].Stale {
		t.Errorf("node crossed the threshold: want a new snapshot with a stale node")
	}
}

func TestTwoCollectorsInOneProcess(t *testing.T) {
	// Private registries: no duplicate registration, no shared state.
	a, pa, _ := newTestCollector(t, StaticNodes{{Name: "n"}}, usage.Window1m)
	b, pb, _ := newTestCollector(t, StaticNodes{{Name: "n"}}, usage.Window1m)
	pa.Set("n", 10, 10)
	pb.Set("n", 90, 90)
	collect(t, a)
	collect(t, b)
	if got := a.Snapshot().Nodes["n"].Windows[usage.Window1m][usage.CPU].Latest; got != 10 {
		t.Errorf("collector a cpu = %v, want 10", got)
	}
	if got := b.Snapshot().Nodes["n"].Windows[usage.Window1m][usage.CPU].Latest; got != 90 {
		t.Errorf("collector b cpu = %v, want 90", got)
	}
	// Sharing one registerer is refused with an error, not a panic.
	reg := prometheus.NewRegistry()
	cfg := Config{Provider: static.New(), Nodes: StaticNodes{}, Registerer: reg}
	if _, err := New(cfg); err != nil {
		t.Fatalf("first collector on reg: %v", err)
	}
	if _, err := New(cfg); err == nil {
		t.Errorf("second collector on the same registerer: want error")
	}
}

func TestConfigValidation(t *testing.T) {
	_, err := New(Config{Period: -time.Second, Windows: []usage.Window{usage.Window1m, usage.Window1m, usage.Window(time.Second)}})
	if err == nil {
		t.Fatalf("want error")
	}
	for _, want := range []string{"collector.provider", "collector.nodes", "collector.period", "collector.windows[1]"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
