package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// TestProviderOutage drives a real collector through an outage of its
// provider and checks what every endpoint says before, during and after.
func TestProviderOutage(t *testing.T) {
	var mu sync.Mutex
	at := now
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	step := func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
	p := static.New(static.WithClock(clock))
	p.Set("a", 40, 50)
	col, err := collector.New(collector.Config{Provider: p, Nodes: p, Now: clock}) // period 15s, stale after 45s
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(Options{Source: col, Now: clock})
	status := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	usageOf := func() apiv1.NodeUsage {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/usage", nil))
		var l apiv1.UsageList
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
			t.Fatalf("decoding /api/v1/usage (%d): %v", rec.Code, err)
		}
		return l.Nodes["a"]
	}
	want := func(phase string, path string, code int) {
		t.Helper()
		if got := status(path); got != code {
			t.Errorf("%s: %s = %d, want %d", phase, path, got, code)
		}
	}

	want("before any round", "/readyz", 503)
	want("before any round", "/watcher", 503)
	want("before any round", "/api/v1/usage", 503)
	_ = col.Collect(context.Background())
	want("healthy", "/readyz", 200)
	want("healthy", "/watcher", 200)
	want("healthy", "/watcher/health", 200)

	p.SetError(errors.New("metrics-server unavailable"))
	step(15 * time.Second)
	_ = col.Collect(context.Background())
	want("outage, data 15s old", "/watcher/health", 503) // the provider failed
	want("outage, data 15s old", "/readyz", 200)         // the data is still fresh
	step(31 * time.Second)
	_ = col.Collect(context.Background())
	want("outage, data 46s old", "/readyz", 503)
	want("outage, data 46s old", "/watcher", 503)
	want("outage, data 46s old", "/healthz", 200)
	if u := usageOf(); !u.Stale || u.SampleAgeSeconds != 46 || u.Windows["1m"]["cpu"].Latest != 40 {
		t.Errorf("outage: /api/v1/usage node a = %+v, want the last data, 46s old, stale", u)
	}

	p.SetError(nil)
	step(15 * time.Second)
	_ = col.Collect(context.Background())
	want("recovered", "/readyz", 200)
	want("recovered", "/watcher", 200)
	if u := usageOf(); u.Stale || u.SampleAgeSeconds != 0 {
		t.Errorf("recovered: node a = %+v, want fresh", u)
	}
}

// TestReadyzSaysWhyNotReady checks that /readyz, which `ballast status`
// prints when load-watcher is not ready, names the provider and its error.
func TestReadyzSaysWhyNotReady(t *testing.T) {
	p := static.New(static.WithClock(func() time.Time { return now }))
	p.SetError(errors.New("the server could not find the requested resource (get nodes.metrics.k8s.io)"))
	col, err := collector.New(collector.Config{Provider: p, Nodes: p, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(Options{Source: col, Now: func() time.Time { return now }})
	readyz := func() (int, readiness) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ReadyzPath, nil))
		var r readiness
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("decoding %s (%d): %v", ReadyzPath, rec.Code, err)
		}
		return rec.Code, r
	}
	if code, r := readyz(); code != http.StatusServiceUnavailable || r.Reason != "no sample collected yet" {
		t.Errorf("before any round: %d %+v", code, r)
	}
	_ = col.Collect(context.Background())
	want := "no successful sample yet: static: the server could not find the requested resource (get nodes.metrics.k8s.io)"
	if code, r := readyz(); code != http.StatusServiceUnavailable || r.Ready || r.Reason != want {
		t.Errorf("provider failing: %d, reason %q; want 503 and %q", code, r.Reason, want)
	}
}
