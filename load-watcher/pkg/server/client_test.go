package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
)

// The Go client (core/client) against the real API: what the server
// serves is what the client hands its callers.

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newServer runs the real API over a collector sampling a static provider;
// server and client share one fake clock.
func newServer(t *testing.T, clk *clock) (*httptest.Server, *static.Provider, *collector.Collector) {
	t.Helper()
	p := static.New(static.WithClock(clk.Now))
	p.Set("a", 30, 40)
	p.Set("b", 70, 20)
	col, err := collector.New(collector.Config{Provider: p, Nodes: p, Period: 15 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.NewHandler(server.Options{Source: col, Now: clk.Now}))
	t.Cleanup(srv.Close)
	return srv, p, col
}

func TestClientFollowsServer(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	srv, _, col := newServer(t, clk)
	c, err := client.New(client.Config{Address: srv.URL + "/", StaleAfter: 30 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if c.Snapshot() != nil {
		t.Fatalf("Snapshot before any refresh: want nil")
	}
	if _, ok := c.Age(); ok {
		t.Errorf("Age before any refresh: want not ok")
	}
	// Before the collector sampled, the server answers 503.
	if err := c.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Refresh before data: err = %v, want a 503", err)
	}

	if err := col.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	if diff := cmp.Diff(col.Snapshot().Nodes, snap.Nodes, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
		t.Errorf("client snapshot differs from the collector's (-collector,+client):\n%s", diff)
	}
	if snap.Source != static.Name {
		t.Errorf("Source = %q", snap.Source)
	}
	if c.Snapshot() != snap {
		t.Errorf("unchanged staleness: want the cached snapshot")
	}

	// The server goes away; the cached data stays and ages into staleness
	// at the client's own threshold (30s), not the server's (45s).
	srv.Close()
	clk.Step(20 * time.Second)
	if err := c.Refresh(context.Background()); err == nil {
		t.Fatalf("Refresh with the server gone: want error")
	}
	if c.LastError() == nil {
		t.Errorf("LastError: want the failure")
	}
	if _, ok := c.Snapshot().Node("a"); !ok {
		t.Errorf("20s old: node a stale, want fresh")
	}
	clk.Step(11 * time.Second)
	n := c.Snapshot().Nodes["a"]
	if !n.Stale || n.Windows[usage.Window1m][usage.CPU].Latest != 30 {
		t.Errorf("31s old: got %+v, want the last data, stale", n)
	}
	if age, ok := c.Age(); !ok || age != 31*time.Second {
		t.Errorf("Age = %v, %v; want 31s", age, ok)
	}
}

func TestWaitForSnapshot(t *testing.T) {
	clk := &clock{t: time.Now()}
	srv, _, col := newServer(t, clk)
	if err := col.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, _ := client.New(client.Config{Address: srv.URL, Interval: 10 * time.Millisecond, Now: clk.Now})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go c.Run(ctx)
	snap, err := client.WaitForSnapshot(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Node("b"); !ok {
		t.Errorf("node b: want fresh usage")
	}

	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	never, _ := client.New(client.Config{Address: "http://127.0.0.1:1"})
	if _, err := client.WaitForSnapshot(short, never); err == nil {
		t.Errorf("WaitForSnapshot on a client never refreshed: want error")
	}
}

func TestFetchAnswersOnce(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	srv, _, col := newServer(t, clk)
	ctx := context.Background()
	if _, err := client.Fetch(ctx, client.Config{Address: "ftp://x"}); err == nil || !strings.Contains(err.Error(), "client.address") {
		t.Errorf("invalid address: err = %v, want the field named", err)
	}
	if _, err := client.Fetch(ctx, client.Config{Address: srv.URL, Now: clk.Now}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("before any sample: err = %v, want the server's 503", err)
	}
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	// 40 s after the only sample, it is stale at a 30 s threshold and
	// fresh at the default one.
	clk.Step(40 * time.Second)
	snap, err := client.Fetch(ctx, client.Config{Address: srv.URL, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := snap.Node("a"); !ok || a.Windows[usage.Window1m][usage.CPU].Latest != 30 {
		t.Errorf("node a = %+v, %t; want fresh with 30 %% CPU", a, ok)
	}
	if snap, err = client.Fetch(ctx, client.Config{Address: srv.URL, StaleAfter: 30 * time.Second, Now: clk.Now}); err != nil {
		t.Fatal(err)
	}
	if b := snap.Nodes["b"]; !b.Stale || b.Windows[usage.Window1m][usage.CPU].Latest != 70 {
		t.Errorf("node b = %+v; want its data, stale at a 30 s threshold", b)
	}
}

// Between two rounds the server answers 304 Not Modified to the client's
// If-None-Match: the client keeps its cache and the snapshot it built, and
// counts the request as a successful refresh. A new round is answered in
// full.
func TestClientKeepsAnUnchangedRound(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	p := static.New(static.WithClock(clk.Now))
	p.Set("a", 30, 40)
	col, err := collector.New(collector.Config{Provider: p, Nodes: p, Period: 15 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	api := server.NewHandler(server.Options{Source: col, Now: clk.Now})
	var mu sync.Mutex
	var statuses []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		api.ServeHTTP(rec, r)
		mu.Lock()
		defer mu.Unlock()
		statuses = append(statuses, rec.status)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Address: srv.URL, StaleAfter: 30 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := col.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	refresh := func() {
		t.Helper()
		if err := c.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	first := c.Snapshot()
	clk.Step(5 * time.Second)
	refresh()
	if got := c.Snapshot(); got != first {
		t.Errorf("after an unchanged round: a new snapshot, want the one the client had")
	}
	if age, ok := c.Age(); !ok || age != 0 {
		t.Errorf("Age after a 304 = %v, %v; want 0, the refresh succeeded", age, ok)
	}
	// The cached answer still ages into staleness on the client's clock.
	clk.Step(26 * time.Second)
	refresh()
	if n := c.Snapshot().Nodes["a"]; !n.Stale {
		t.Errorf("31s after the sample: node a fresh, want stale")
	}
	// A new round is answered in full.
	p.Set("a", 60, 40)
	if err := col.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	refresh()
	n := c.Snapshot().Nodes["a"]
	if n.Stale || n.Windows[usage.Window1m][usage.CPU].Latest != 60 {
		t.Errorf("after a new round: got %+v, want the new sample, fresh", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]int{http.StatusOK, http.StatusNotModified, http.StatusNotModified, http.StatusOK}, statuses); diff != "" {
		t.Errorf("statuses (-want,+got):\n%s", diff)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
