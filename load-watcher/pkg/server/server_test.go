package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
)

var update = flag.Bool("update", false, "rewrite golden files")

var now = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// fakeSource serves a fixed snapshot and status.
type fakeSource struct {
	snap    *usage.Snapshot
	status  collector.Status
	windows []usage.Window // usage.DefaultWindows when nil

	once  sync.Once
	round *collector.Round
}

func (f *fakeSource) Round() *collector.Round {
	f.once.Do(func() {
		if f.snap != nil {
			f.round = collector.RoundOf(f.Config(), f.snap, f.status.NodesWithoutSamples)
		}
	})
	return f.round
}
func (f *fakeSource) Status() collector.Status { return f.status }
func (f *fakeSource) Config() collector.Config {
	windows := f.windows
	if windows == nil {
		windows = usage.DefaultWindows
	}
	return collector.Config{Period: 15 * time.Second, StaleAfter: 45 * time.Second, Windows: windows}
}

func stats(avg, std, maxV, p95, latest float64, n int) usage.Stats {
	return usage.Stats{Avg: avg, Std: std, Max: maxV, P95: p95, Latest: latest, Samples: n}
}

func nodeUsage(name string, age time.Duration, stale bool, cpu, mem float64) usage.NodeUsage {
	w := map[usage.Window]map[usage.Resource]usage.Stats{}
	for i, win := range usage.DefaultWindows {
		n := 4 * (i + 1)
		w[win] = map[usage.Resource]usage.Stats{
			usage.CPU:    stats(cpu, 2.5, cpu+5, cpu+4, cpu+1, n),
			usage.Memory: stats(mem, 0.5, mem+1, mem+1, mem, n),
		}
	}
	return usage.NodeUsage{Node: name, SampleTime: now.Add(-age), Stale: stale, Windows: w}
}

func twoNodes() *fakeSource {
	return &fakeSource{
		snap: &usage.Snapshot{Time: now, Source: "metrics-server", Nodes: map[string]usage.NodeUsage{
			"agent-1":  nodeUsage("agent-1", 5*time.Second, false, 40, 60),
			"server-1": nodeUsage("server-1", 2*time.Second, false, 12.5, 33.25),
			"old-1":    nodeUsage("old-1", time.Minute, true, 90, 90),
		}},
		status: collector.Status{Ready: true, Rounds: 3, NodesTracked: 3, NodesWithoutSamples: []string{"new-1"}},
	}
}

func get(t *testing.T, src Source, target string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, src, http.MethodGet, target)
}

func do(t *testing.T, src Source, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	h := NewHandler(Options{Source: src, Now: func() time.Time { return now }, Gatherer: prometheus.NewRegistry()})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
		t.Errorf("%s (-want,+got):\n%s", name, diff)
	}
}

func TestWatcherGolden(t *testing.T) {
	for _, tc := range []struct{ name, target, file string }{
		{name: "all hosts", target: "/watcher", file: "watcher.golden.json"},
		{name: "one host", target: "/watcher?host=agent-1", file: "watcher-host.golden.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, twoNodes(), tc.target)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			golden(t, tc.file, rec.Body.Bytes())
		})
	}
}

// The upstream types, with paypal/load-watcher v0.2.x's exact Go field
// names and JSON tags (pkg/watcher/watcher.go). Decoding with unknown
// fields disallowed proves the response has no key upstream lacks.
type (
	upstreamWindow struct {
		Duration string `json:"duration"`
		Start    int64  `json:"start"`
		End      int64  `json:"end"`
	}
	upstreamMetric struct {
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		Operator string  `json:"operator"`
		Rollup   string  `json:"rollup,omitempty"`
		Value    float64 `json:"value"`
	}
	upstreamNodeMetricsMap map[string]upstreamNodeMetrics
	upstreamData           struct {
		NodeMetricsMap upstreamNodeMetricsMap
	}
	upstreamWatcherMetrics struct {
		Timestamp int64          `json:"timestamp"`
		Window    upstreamWindow `json:"window"`
		Source    string         `json:"source"`
		Data      upstreamData   `json:"data"`
	}
	upstreamTags     struct{}
	upstreamMetadata struct {
		DataCenter string `json:"dataCenter,omitempty"`
	}
	upstreamNodeMetrics struct {
		Metrics  []upstreamMetric `json:"metrics,omitempty"`
		Tags     upstreamTags     `json:"tags,omitempty"`
		Metadata upstreamMetadata `json:"metadata,omitempty"`
	}
)

func TestWatcherDecodesIntoUpstreamTypes(t *testing.T) {
	rec := get(t, twoNodes(), "/watcher")
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	var got upstreamWatcherMetrics
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decoding into the upstream types: %v", err)
	}
	m := func(typ, op string, v float64) upstreamMetric {
		name := map[string]string{"CPU": "cpu", "Memory": "memory"}[typ]
		return upstreamMetric{Name: name, Type: typ, Operator: op, Rollup: "15m", Value: v}
	}
	want := upstreamWatcherMetrics{
		Timestamp: now.Unix(),
		Window:    upstreamWindow{Duration: "15m", Start: now.Add(-15 * time.Minute).Unix(), End: now.Unix()},
		Source:    "metrics-server",
		Data: upstreamData{NodeMetricsMap: upstreamNodeMetricsMap{
			// The stale node old-1 is left out: the format cannot flag it.
			"agent-1": {Metrics: []upstreamMetric{
				m("CPU", "AVG", 40), m("CPU", "STD", 2.5), m("CPU", "Latest", 41),
				m("Memory", "AVG", 60), m("Memory", "STD", 0.5), m("Memory", "Latest", 60),
			}},
			"server-1": {Metrics: []upstreamMetric{
				m("CPU", "AVG", 12.5), m("CPU", "STD", 2.5), m("CPU", "Latest", 13.5),
				m("Memory", "AVG", 33.25), m("Memory", "STD", 0.5), m("Memory", "Latest", 33.25),
			}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/watcher (-want,+got):\n%s", diff)
	}
}

func TestUsageGolden(t *testing.T) {
	for _, tc := range []struct{ name, target, file string }{
		{name: "every node", target: "/api/v1/usage", file: "usage.golden.json"},
		{name: "one node one window", target: "/api/v1/usage?node=old-1&window=5m", file: "usage-node-window.golden.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, twoNodes(), tc.target)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			golden(t, tc.file, rec.Body.Bytes())
		})
	}
}

func TestUsageMatchesWireTypes(t *testing.T) {
	rec := get(t, twoNodes(), "/api/v1/usage")
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	var got apiv1.UsageList
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	old := got.Nodes["old-1"]
	if !old.Stale || old.SampleAgeSeconds != 60 {
		t.Errorf("old-1: stale=%v age=%v, want stale, 60s", old.Stale, old.SampleAgeSeconds)
	}
	if got := old.Windows["15m"][usage.CPU]; got != stats(90, 2.5, 95, 94, 91, 12) {
		t.Errorf("old-1 15m cpu = %+v", got)
	}
	if diff := cmp.Diff([]string{"new-1"}, got.NodesWithoutSamples); diff != "" {
		t.Errorf("nodesWithoutSamples (-want,+got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	empty := &fakeSource{status: collector.Status{Reason: "no sample collected yet"}}
	allStale := &fakeSource{snap: &usage.Snapshot{Nodes: map[string]usage.NodeUsage{"a": nodeUsage("a", time.Hour, true, 1, 1)}}}
	tests := []struct {
		name       string
		src        Source
		method     string
		target     string
		wantCode   int
		wantReason string
	}{
		{name: "watcher before data", src: empty, target: "/watcher", wantCode: 503, wantReason: "NoData"},
		{name: "usage before data", src: empty, target: "/api/v1/usage", wantCode: 503, wantReason: "NoData"},
		{name: "watcher all stale", src: allStale, target: "/watcher", wantCode: 503, wantReason: "StaleUsage"},
		{name: "unknown host", src: twoNodes(), target: "/watcher?host=nope", wantCode: 404, wantReason: "UnknownHost"},
		{name: "stale host", src: twoNodes(), target: "/watcher?host=old-1", wantCode: 404, wantReason: "StaleUsage"},
		{name: "malformed host", src: twoNodes(), target: "/watcher?host=Not_A_Node", wantCode: 400, wantReason: "BadRequest"},
		{name: "empty host", src: twoNodes(), target: "/watcher?host=", wantCode: 400, wantReason: "BadRequest"},
		{name: "host twice", src: twoNodes(), target: "/watcher?host=a&host=b", wantCode: 400, wantReason: "BadRequest"},
		{name: "unknown parameter", src: twoNodes(), target: "/watcher?hots=agent-1", wantCode: 400, wantReason: "BadRequest"},
		{name: "bad escape", src: twoNodes(), target: "/watcher?host=%zz", wantCode: 400, wantReason: "BadRequest"},
		{name: "unknown node", src: twoNodes(), target: "/api/v1/usage?node=nope", wantCode: 404, wantReason: "UnknownNode"},
		{name: "node without samples", src: twoNodes(), target: "/api/v1/usage?node=new-1", wantCode: 404, wantReason: "NoSamples"},
		{name: "window not kept", src: twoNodes(), target: "/api/v1/usage?window=10m", wantCode: 400, wantReason: "BadRequest"},
		{name: "window not a duration", src: twoNodes(), target: "/api/v1/usage?window=soon", wantCode: 400, wantReason: "BadRequest"},
		{name: "negative window", src: twoNodes(), target: "/api/v1/usage?window=-5m", wantCode: 400, wantReason: "BadRequest"},
		{name: "wrong method", src: twoNodes(), method: http.MethodPost, target: "/watcher", wantCode: 405, wantReason: "MethodNotAllowed"},
		{name: "unknown path", src: twoNodes(), target: "/watcher2", wantCode: 404, wantReason: "NotFound"},
		{name: "long query", src: twoNodes(), target: "/watcher?host=" + strings.Repeat("a", 2000), wantCode: 400, wantReason: "BadRequest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			rec := do(t, tt.src, method, tt.target)
			var body apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body is not a JSON error: %v: %s", err, rec.Body)
			}
			if rec.Code != tt.wantCode || body.Code != tt.wantCode || body.Reason != tt.wantReason || body.Message == "" {
				t.Errorf("got %d %+v, want %d %s with a message", rec.Code, body, tt.wantCode, tt.wantReason)
			}
		})
	}
}

func TestProbes(t *testing.T) {
	ready := twoNodes()
	down := &fakeSource{status: collector.Status{Reason: "provider has not answered", Rounds: 9, LastError: errors.New("connection refused")}}
	tests := []struct {
		name     string
		src      Source
		target   string
		wantCode int
	}{
		{name: "healthz always ok", src: down, target: "/healthz", wantCode: 200},
		{name: "ready", src: ready, target: "/readyz", wantCode: 200},
		{name: "not ready", src: down, target: "/readyz", wantCode: 503},
		{name: "upstream health ok", src: ready, target: "/watcher/health", wantCode: 200},
		{name: "upstream health failing", src: down, target: "/watcher/health", wantCode: 503},
		{name: "metrics", src: ready, target: "/metrics", wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, tt.src, tt.target)
			if rec.Code != tt.wantCode {
				t.Errorf("%s: status %d, want %d: %s", tt.target, rec.Code, tt.wantCode, rec.Body)
			}
		})
	}
	rec := get(t, down, "/readyz")
	body, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(body), "connection refused") || !strings.Contains(string(body), `"ready":false`) {
		t.Errorf("/readyz body %s: want the reason and ready:false", body)
	}
}

func TestWarmLoopEncodesAhead(t *testing.T) {
	src := twoNodes()
	h := NewHandler(Options{Source: src, Now: func() time.Time { return now }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.WarmLoop(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for h.s.answers.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the warm loop encoded nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if got := h.s.answers.Load().from.Value(); got != src.Round() {
		t.Fatalf("the warm loop encoded round %p, want the source's %p", got, src.Round())
	}
	// Answers built from the warm loop's encoding equal the golden ones.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/usage", nil))
	golden(t, "usage.golden.json", rec.Body.Bytes())
}
