package collector

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/usage"
)

// roundStats returns every statistic of the named node in r.
func roundStats(t *testing.T, r *Round, name string) []usage.Stats {
	t.Helper()
	i, ok := r.Find(name)
	if !ok {
		t.Fatalf("round %d has no node %s", r.Seq(), name)
	}
	return append([]usage.Stats(nil), r.nodeStats(i)...)
}

func TestRoundKeepsSilentNodes(t *testing.T) {
	c, p, clock := newTestCollector(t, StaticNodes{{Name: "a"}, {Name: "b"}}, usage.Window1m)
	p.Set("a", 10, 10)
	p.Set("b", 20, 20)
	collect(t, c)
	first := c.Round()
	bStats, bAt := roundStats(t, first, "b"), first.SampleTime(1)

	p.Remove("b") // the source says nothing more about b
	for range 4 {
		clock.Step(15 * time.Second)
		collect(t, c)
	}
	r := c.Round()
	if r.Seq() != first.Seq()+4 {
		t.Errorf("seq = %d, want %d", r.Seq(), first.Seq()+4)
	}
	i, _ := r.Find("b")
	if diff := cmp.Diff(bStats, roundStats(t, r, "b")); diff != "" {
		t.Errorf("b's statistics changed without a sample (-want,+got):\n%s", diff)
	}
	if r.Version(i) != first.Version(1) || !r.SampleTime(i).Equal(bAt) {
		t.Errorf("b: version %d at %v, want %d at %v", r.Version(i), r.SampleTime(i), first.Version(1), bAt)
	}
	if a, _ := r.Find("a"); r.Version(a) != r.Seq() {
		t.Errorf("a: version %d, want the latest round's %d", r.Version(a), r.Seq())
	}
	// 60 s without a sample, stale after 45 s; a is fresh.
	if !r.Stale(i, clock.Now()) || r.Stale(0, clock.Now()) {
		t.Errorf("stale a=%v b=%v, want b only", r.Stale(0, clock.Now()), r.Stale(i, clock.Now()))
	}
	if n := c.Snapshot().Nodes["b"]; !n.Stale {
		t.Errorf("snapshot: b not stale")
	}
}

func TestRoundAfterNodesLeaveAndJoin(t *testing.T) {
	nodes := &mutableNodes{}
	nodes.set("a", "b", "c", "d")
	c, p, clock := newTestCollector(t, nodes, usage.Window1m)
	for _, n := range []string{"a", "b", "c"} { // d has no samples
		p.Set(n, 10, 10)
	}
	collect(t, c)
	before := c.Round()
	if diff := cmp.Diff([]string{"d"}, before.NodesWithoutSamples()); diff != "" {
		t.Errorf("without samples (-want,+got):\n%s", diff)
	}

	nodes.set("a", "c", "d") // b deleted
	c.Prune()
	r := c.Round()
	if got := names(r); !cmp.Equal(got, []string{"a", "c"}) {
		t.Errorf("after b left: nodes %v, want [a c]", got)
	}
	for _, n := range []string{"a", "c"} {
		j, _ := before.Find(n)
		i, _ := r.Find(n)
		if r.Version(i) != before.Version(j) || !cmp.Equal(roundStats(t, r, n), roundStats(t, before, n)) {
			t.Errorf("%s changed when b left", n)
		}
	}

	nodes.set("a", "b", "c", "d") // b back: a new series
	p.Set("d", 40, 40)
	clock.Step(15 * time.Second)
	collect(t, c)
	r = c.Round()
	if got := names(r); !cmp.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("after b came back: nodes %v, want [a b c d]", got)
	}
	if st, _ := r.Stats(1, usage.Window1m, usage.CPU); st.Samples != 1 {
		t.Errorf("b came back with %d samples, want 1 (its old buffer was freed)", st.Samples)
	}
	if len(r.NodesWithoutSamples()) != 0 {
		t.Errorf("without samples: %v, want none", r.NodesWithoutSamples())
	}
}

func TestRoundOf(t *testing.T) {
	at := t0.Add(time.Second)
	snap := &usage.Snapshot{Source: "replay", Nodes: map[string]usage.NodeUsage{
		"b": {SampleTime: at, Windows: map[usage.Window]map[usage.Resource]usage.Stats{
			usage.Window1m: {usage.CPU: {Avg: 5, Samples: 2}, usage.Memory: {Avg: 9}}, // memory without samples
		}},
		"a": {SampleTime: at},
	}}
	r := RoundOf(Config{Period: 15 * time.Second, Windows: []usage.Window{usage.Window1m}}, snap, []string{"z", "y"})
	if got := names(r); !cmp.Equal(got, []string{"a", "b"}) || r.Source() != "replay" {
		t.Fatalf("nodes %v from %q, want [a b] from replay", got, r.Source())
	}
	if st, ok := r.Stats(1, usage.Window1m, usage.CPU); !ok || st.Avg != 5 {
		t.Errorf("b cpu = %+v, %v", st, ok)
	}
	if _, ok := r.Stats(1, usage.Window1m, usage.Memory); ok {
		t.Errorf("b memory: want none (no samples)")
	}
	if _, ok := r.Stats(1, usage.Window5m, usage.CPU); ok {
		t.Errorf("a window not kept: want none")
	}
	// Stale after the default three periods; version 0 is unknown.
	if r.Stale(0, at.Add(45*time.Second)) || !r.Stale(0, at.Add(45*time.Second+1)) || r.Version(0) != 0 {
		t.Errorf("staleness or version of a")
	}
	if diff := cmp.Diff([]string{"y", "z"}, r.NodesWithoutSamples()); diff != "" {
		t.Errorf("without samples (-want,+got):\n%s", diff)
	}
}

func names(r *Round) []string {
	out := make([]string, r.Len())
	for i := range out {
		out[i] = r.Name(i)
	}
	return out
}
