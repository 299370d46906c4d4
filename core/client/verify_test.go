package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/usage"
)

var answerTime = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// goodAnswer is a well-formed /api/v1/usage answer with nodes a and b, as
// maps so that a case can break one field.
func goodAnswer() map[string]any {
	node := func(cpu float64) map[string]any {
		stats := func(v float64) map[string]any {
			return map[string]any{"avg": v, "std": 1.5, "max": v + 2, "p95": v + 1, "latest": v, "samples": 4}
		}
		return map[string]any{
			"sampleAgeSeconds": 5, "stale": false, "sampleTime": answerTime.Add(-5 * time.Second).Format(time.RFC3339Nano),
			"windows": map[string]any{
				"1m": map[string]any{"cpu": stats(cpu), "memory": stats(40)},
				"5m": map[string]any{"cpu": stats(cpu), "memory": stats(40)},
			},
		}
	}
	return map[string]any{
		"apiVersion": "load-watcher/v1", "time": answerTime.Format(time.RFC3339Nano), "source": "metrics-server",
		"periodSeconds": 15, "staleAfterSeconds": 45, "windows": []any{"1m", "5m"},
		"nodes": map[string]any{"a": node(30), "b": node(70)}, "nodesWithoutSamples": []any{},
	}
}

// fixedServer is a real HTTP server answering /api/v1/usage with whatever body was set last.
type fixedServer struct {
	mu   sync.Mutex
	body []byte
}

func (f *fixedServer) set(t *testing.T, body any) {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.body = b
}

func (f *fixedServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(f.body)
}

// newFixed returns a client of a fixedServer that first answered goodAnswer.
func newFixed(t *testing.T, cfg Config) (*Client, *fixedServer) {
	t.Helper()
	f := &fixedServer{}
	f.set(t, goodAnswer())
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.Address = srv.URL
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return answerTime.Add(time.Second) }
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatalf("good answer refused: %v", err)
	}
	if _, ok := c.Snapshot().Node("a"); !ok {
		t.Fatalf("good answer: node a not usable: %+v", c.Snapshot().Nodes["a"])
	}
	return c, f
}

func nodeOf(a map[string]any, name string) map[string]any {
	return a["nodes"].(map[string]any)[name].(map[string]any)
}

func statsOf(a map[string]any, node, window, res string) map[string]any {
	return nodeOf(a, node)["windows"].(map[string]any)[window].(map[string]any)[res].(map[string]any)
}

// TestClientMarksNonsenseNodesStale checks that a node whose data makes no
// sense is stale to the caller, with the reason naming the field, while the
// other nodes of the same answer stay usable.
func TestClientMarksNonsenseNodesStale(t *testing.T) {
	tests := []struct {
		name      string
		breakNode func(a map[string]any)
		wantField string
	}{
		{"negative average", func(a map[string]any) { statsOf(a, "a", "5m", "cpu")["avg"] = -3 }, "nodes[a].windows[5m][cpu].avg"},
		{"negative std", func(a map[string]any) { statsOf(a, "a", "1m", "memory")["std"] = -0.5 }, "nodes[a].windows[1m][memory].std"},
		{"above 500 percent (a percent read as a fraction)", func(a map[string]any) { statsOf(a, "a", "1m", "cpu")["latest"] = 3700 }, "nodes[a].windows[1m][cpu].latest"},
		{"negative sample count", func(a map[string]any) { statsOf(a, "a", "5m", "memory")["samples"] = -1 }, "nodes[a].windows[5m][memory].samples"},
		{"sample time in the future", func(a map[string]any) {
			nodeOf(a, "a")["sampleTime"] = answerTime.Add(time.Hour).Format(time.RFC3339)
		}, "nodes[a].sampleTime"},
		{"negative sample age (fresh forever)", func(a map[string]any) { nodeOf(a, "a")["sampleAgeSeconds"] = -600 }, "nodes[a].sampleAgeSeconds"},
		{"no sample time", func(a map[string]any) { delete(nodeOf(a, "a"), "sampleTime") }, "nodes[a].sampleTime"},
		{"no windows", func(a map[string]any) { delete(nodeOf(a, "a"), "windows") }, "nodes[a].windows"},
		{"window the answer does not list", func(a map[string]any) {
			nodeOf(a, "a")["windows"].(map[string]any)["15m"] = map[string]any{}
		}, "nodes[a].windows[15m]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newFixed(t, Config{})
			a := goodAnswer()
			tt.breakNode(a)
			f.set(t, a)
			if err := c.Refresh(context.Background()); err != nil {
				t.Fatalf("Refresh = %v; a bad node must not refuse the whole answer", err)
			}
			snap := c.Snapshot()
			n, ok := snap.Node("a")
			if ok || !snap.Nodes["a"].Stale {
				t.Errorf("node a usable (%+v); want it stale", n)
			}
			if got := snap.Nodes["a"].Invalid; !strings.Contains(got, tt.wantField) {
				t.Errorf("Invalid = %q, want the field %s named", got, tt.wantField)
			}
			if b, ok := snap.Node("b"); !ok || b.Invalid != "" {
				t.Errorf("node b = %+v, %v; want it usable", b, ok)
			}
			// Once the server answers sense again, the node is usable again.
			f.set(t, goodAnswer())
			if err := c.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Snapshot().Node("a"); !ok {
				t.Errorf("node a still refused after a good answer: %+v", c.Snapshot().Nodes["a"])
			}
		})
	}
}

// TestClientRefusesNonsenseAnswers checks answers refused as a whole: the
// error wraps ErrRefused and names the problem, and the cached snapshot is
// kept, so it ages into staleness as when the server is down.
func TestClientRefusesNonsenseAnswers(t *testing.T) {
	tests := []struct {
		name  string
		body  func() any
		limit int64
		want  string
	}{
		{"malformed JSON", func() any { return []byte(`{"apiVersion":"load-watcher/v1","nodes":{`) }, 0, "malformed JSON"},
		{"a number beyond float64 (would be Inf)", func() any {
			return []byte(strings.Replace(string(must(json.Marshal(goodAnswer()))), `"avg":30`, `"avg":1e999`, 1))
		}, 0, "malformed JSON"},
		{"trailing garbage", func() any { return append(must(json.Marshal(goodAnswer())), "{}"...) }, 0, "malformed JSON"},
		{"oversized", func() any {
			a := goodAnswer()
			for i := range 40 {
				a["nodes"].(map[string]any)[fmt.Sprintf("n-%d", i)] = nodeOf(a, "a")
			}
			return a
		}, 4096, "larger than 4096 bytes"},
		{"other apiVersion", func() any { a := goodAnswer(); a["apiVersion"] = "load-watcher/v2"; return a }, 0, "apiVersion"},
		{"no time", func() any { a := goodAnswer(); delete(a, "time"); return a }, 0, "time: Required"},
		{"time in the future", func() any {
			a := goodAnswer()
			a["time"] = answerTime.Add(10 * time.Minute).Format(time.RFC3339)
			return a
		}, 0, "ahead of this host's clock"},
		{"no nodes", func() any { a := goodAnswer(); delete(a, "nodes"); return a }, 0, "nodes: Required"},
		{"no windows", func() any { a := goodAnswer(); delete(a, "windows"); return a }, 0, "windows: Required"},
		{"unknown window size", func() any { a := goodAnswer(); a["windows"] = []any{"1m", "soon"}; return a }, 0, "windows[1]"},
		{"zero period", func() any { a := goodAnswer(); a["periodSeconds"] = 0; return a }, 0, "periodSeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newFixed(t, Config{MaxResponseBytes: tt.limit})
			before := c.Snapshot()
			f.set(t, tt.body())
			err := c.Refresh(context.Background())
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Refresh = %v, want ErrRefused naming %q", err, tt.want)
			}
			if c.Snapshot() != before {
				t.Errorf("the refused answer replaced the cached snapshot")
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestClientDropsNodesItCannotKnow(t *testing.T) {
	c, f := newFixed(t, Config{NodeExists: func(name string) bool { return name != "b" }})
	a := goodAnswer()
	a["nodes"].(map[string]any)["Not_A_Node"] = nodeOf(goodAnswer(), "a")
	f.set(t, a)
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	if _, ok := snap.Nodes["b"]; ok {
		t.Errorf("node b, unknown to NodeExists, is in the snapshot")
	}
	if _, ok := snap.Nodes["Not_A_Node"]; ok {
		t.Errorf("a name that is no DNS subdomain is in the snapshot")
	}
	if _, ok := snap.Node("a"); !ok {
		t.Errorf("node a: want usable")
	}
}

func TestClientIgnoresUnknownResources(t *testing.T) {
	c, f := newFixed(t, Config{})
	a := goodAnswer()
	nodeOf(a, "a")["windows"].(map[string]any)["5m"].(map[string]any)["gpu"] = map[string]any{"avg": -1}
	f.set(t, a)
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, ok := c.Snapshot().Node("a")
	if !ok {
		t.Fatalf("node a refused over a resource the client does not read: %+v", c.Snapshot().Nodes["a"])
	}
	if _, ok := n.Windows[usage.Window5m]["gpu"]; ok {
		t.Errorf("unknown resource kept")
	}
}

// TestVerifyStats covers what JSON cannot carry but a decoder bug or a
// future encoding could: NaN and infinities.
func TestVerifyStats(t *testing.T) {
	tests := []struct {
		name  string
		stats usage.Stats
		want  string
	}{
		{"fine", usage.Stats{Avg: 30, Std: 1, Max: 120, P95: 110, Latest: 30, Samples: 4}, ""},
		{"NaN", usage.Stats{Avg: math.NaN()}, "x.avg"},
		{"+Inf", usage.Stats{P95: math.Inf(1)}, "x.p95"},
		{"-Inf", usage.Stats{Latest: math.Inf(-1)}, "x.latest"},
		{"negative", usage.Stats{Max: -0.001}, "x.max"},
		{"above MaxPercent", usage.Stats{Std: MaxPercent + 1}, "x.std"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := verifyStats(field.NewPath("x"), tt.stats)
			if tt.want == "" {
				if len(errs) > 0 {
					t.Errorf("errors %v, want none", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tt.want {
				t.Errorf("errors %v, want one at %s", errs, tt.want)
			}
		})
	}
}
