package metricsserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// nodeMetricsPath is where the API server serves NodeMetrics.
const nodeMetricsPath = "/apis/metrics.k8s.io/v1beta1/nodes"

// apiServer stands in for the API server's metrics.k8s.io endpoint: a real
// HTTP server behind a real metrics clientset.
func apiServer(t testing.TB, h http.HandlerFunc) metricsclient.Interface {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	// No client-side rate limit: the fuzz target asks thousands of times.
	cs, err := metricsclient.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestSampleOverHTTP(t *testing.T) {
	cs := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != nodeMetricsPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` +
			`{"metadata":{"name":"a"},"timestamp":"2026-03-04T05:06:07Z","window":"15s","usage":{"cpu":"1500m","memory":"2Gi"}}]}`))
	})
	p, err := New(Config{Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Sample(context.Background(), []provider.Node{{Name: "a", Allocatable: provider.Quantities{MilliCPU: 3000, MemoryBytes: 8 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	// 1.5 of 3 cores = 50 %; 2Gi of 8Gi = 25 %.
	want := []provider.Sample{{Node: "a", Time: ts, CPU: 50, Memory: 25, HasCPU: true, HasMemory: true}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Sample (-want,+got):\n%s", diff)
	}
}

// A metrics API that accepts the request and never answers fails the round
// at the provider's deadline instead of holding it.
func TestSampleEndsAtItsDeadline(t *testing.T) {
	const timeout = 200 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	cs := apiServer(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	p, err := New(Config{Client: cs, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		_, err := p.Sample(context.Background(), []provider.Node{{Name: "a"}})
		done <- result{err, time.Since(start)}
	}()
	select {
	case r := <-done:
		t.Logf("%v", r.err)
		if !errors.Is(r.err, context.DeadlineExceeded) || !strings.Contains(r.err.Error(), "deadline (200ms)") {
			t.Errorf("Sample error = %v, want the round's deadline", r.err)
		}
		if r.elapsed > 10*timeout {
			t.Errorf("Sample took %s, want about %s", r.elapsed, timeout)
		}
	case <-time.After(50 * timeout):
		t.Fatalf("Sample still waits after %s", 50*timeout)
	}
}
