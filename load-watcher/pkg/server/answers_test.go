package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// clusterNodes is a node list tests change between rounds.
type clusterNodes struct {
	mu    sync.Mutex
	names []string
}

func (c *clusterNodes) Nodes() ([]provider.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]provider.Node, len(c.names))
	for i, n := range c.names {
		out[i] = provider.Node{Name: n}
	}
	return out, nil
}

func (c *clusterNodes) set(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = names
}

// TestAnswersReuseUnchangedNodes checks that answers built on the previous
// round's bytes equal answers encoded from scratch, after nodes went
// silent, left and joined.
func TestAnswersReuseUnchangedNodes(t *testing.T) {
	var mu sync.Mutex
	at := now
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	p := static.New(static.WithClock(clock))
	nodes := &clusterNodes{}
	nodes.set("a", "b", "c", "d")
	for i, n := range []string{"a", "b", "c", "d"} {
		p.Set(n, float64(10*i)+0.25, 33.3333)
	}
	col, err := collector.New(collector.Config{Provider: p, Nodes: nodes, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(Options{Source: col, Now: clock})
	s := h.s
	step := func(change func()) (reused int) {
		t.Helper()
		change()
		mu.Lock()
		at = at.Add(15 * time.Second)
		mu.Unlock()
		if err := col.Collect(context.Background()); err != nil {
			t.Fatal(err)
		}
		prev, r := s.answers.Load(), col.Round()
		for i := range r.Len() {
			if _, ok := prev.unchanged(r, i); ok {
				reused++
			}
		}
		got := s.encode(r)
		want := encodeAnswers(col.Round(), nil, s.windows, s.windowNames)
		if !bytes.Equal(got.buf, want.buf) || fmt.Sprint(got.at) != fmt.Sprint(want.at) {
			t.Fatalf("answers on the previous round's bytes differ from fresh ones:\n%s\n%s", got.buf, want.buf)
		}
		if prev != nil && got == prev {
			t.Fatalf("a new round kept the previous answers")
		}
		return reused
	}
	step(func() {})
	if n := step(func() { p.Remove("b") }); n != 1 { // b silent: its bytes are reused
		t.Errorf("reused %d nodes, want 1 (b)", n)
	}
	if n := step(func() { nodes.set("a", "b", "d"); p.Remove("d") }); n != 2 { // c left, b and d silent
		t.Errorf("reused %d nodes, want 2 (b, d)", n)
	}
	step(func() { nodes.set("a", "b", "d", "e"); p.Set("e", 5, 5); p.Set("b", 7, 7) })
	if n := step(func() { nodes.set("b", "e"); p.Remove("e") }); n != 1 { // the first node left, e silent
		t.Errorf("reused %d nodes, want 1 (e)", n)
	}
}

// TestAnswersAreWholeRounds has every node report the round's number,
// publishes rounds while requests run, and checks that every answer holds
// one round entirely, never older than the one before it — with the warm
// loop encoding rounds, and without it.
func TestAnswersAreWholeRounds(t *testing.T) {
	for _, warm := range []bool{true, false} {
		t.Run(fmt.Sprintf("warm loop %v", warm), func(t *testing.T) {
			var mu sync.Mutex
			at := now
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
			p := static.New(static.WithClock(clock))
			const nodes = 300
			set := func(round int) {
				for i := range nodes {
					p.Set(fmt.Sprintf("node-%03d", i), float64(round), float64(round))
				}
			}
			col, err := collector.New(collector.Config{Provider: p, Nodes: p, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			set(1)
			if err := col.Collect(context.Background()); err != nil {
				t.Fatal(err)
			}
			h := NewHandler(Options{Source: col, Now: clock})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			if warm {
				wg.Go(func() { h.WarmLoop(ctx) })
			}
			done := make(chan struct{})
			for _, path := range []string{"/api/v1/usage", "/api/v1/usage?window=1m", "/watcher"} {
				wg.Go(func() {
					last := 0.0
					for {
						select {
						case <-done:
							return
						default:
						}
						got := roundOf(t, h, path)
						if got < last {
							t.Errorf("%s: round %v after round %v", path, got, last)
						}
						last = got
					}
				})
			}
			for round := 2; round <= 40; round++ {
				set(round)
				mu.Lock()
				at = at.Add(15 * time.Second)
				mu.Unlock()
				if err := col.Collect(context.Background()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			close(done)
			cancel()
			wg.Wait()
		})
	}
}

// roundOf requests path and returns the round every node's newest value
// names, failing when nodes disagree.
func roundOf(t *testing.T, h http.Handler, path string) float64 {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	values := map[float64]int{}
	if path == "/watcher" {
		var got upstreamWatcherMetrics
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Errorf("%s: %v", path, err)
			return 0
		}
		for _, n := range got.Data.NodeMetricsMap {
			for _, m := range n.Metrics {
				if m.Operator == "Latest" {
					values[m.Value]++
				}
			}
		}
	} else {
		var got apiv1.UsageList
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Errorf("%s: %v", path, err)
			return 0
		}
		for _, n := range got.Nodes {
			for _, byRes := range n.Windows {
				values[byRes[usage.CPU].Latest]++
				values[byRes[usage.Memory].Latest]++
			}
		}
	}
	if len(values) != 1 {
		t.Errorf("%s: nodes of several rounds in one answer: %v", path, values)
		return 0
	}
	for v := range values {
		return v
	}
	return 0
}
