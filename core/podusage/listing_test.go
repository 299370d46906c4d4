package podusage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	testclock "k8s.io/utils/clock/testing"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

const podMetricsListJSON = `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
{"metadata":{"name":"web-a","namespace":"apps"},"timestamp":"2026-11-23T12:00:00Z","window":"15s",
 "containers":[{"name":"app","usage":{"cpu":"850m","memory":"600Mi"}},{"name":"proxy","usage":{"cpu":"50m","memory":"100Mi"}}]},
{"metadata":{"name":"db-0","namespace":"data"},"timestamp":"2026-11-23T12:00:00Z","window":"15s",
 "containers":[{"name":"db","usage":{"cpu":"200m","memory":"1Gi"}}]}]}`

// TestListingReadsEveryPodOnce answers a cycle's questions about many pods
// from one list, and lists again once the answer is TTL old.
func TestListingReadsEveryPodOnce(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/metrics.k8s.io/v1beta1/pods" {
			http.NotFound(w, r)
			return
		}
		lists.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(podMetricsListJSON))
	}))
	defer srv.Close()
	cs, err := clientset.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	client := cs.CoreV1().RESTClient()
	clk := testclock.NewFakePassiveClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	l := &Listing{Client: client, Clock: clk, TTL: 10 * time.Second}
	ctx := context.Background()
	if got, ok := l.PodUsage(ctx, replica("web-a", "rs", 1)); !ok || got != (loadmodel.Amount{MilliCPU: 900, Memory: 700 << 20}) {
		t.Errorf("web-a: %+v, %v; want both containers summed", got, ok)
	}
	db := replica("db-0", "rs", 1)
	db.Namespace = "data"
	if got, ok := l.PodUsage(ctx, db); !ok || got != (loadmodel.Amount{MilliCPU: 200, Memory: 1 << 30}) {
		t.Errorf("db-0: %+v, %v", got, ok)
	}
	if _, ok := l.PodUsage(ctx, replica("not-measured", "rs", 1)); ok {
		t.Errorf("a pod missing from the list: want unknown")
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("%d lists for three questions within the TTL, want 1", n)
	}
	clk.SetTime(clk.Now().Add(10 * time.Second))
	l.PodUsage(ctx, db)
	if n := lists.Load(); n != 2 {
		t.Errorf("%d lists once the answer is TTL old, want 2", n)
	}
	if _, ok := (&Listing{}).PodUsage(ctx, db); ok {
		t.Errorf("without a client: want unknown")
	}
}

// Each successful list feeds the Trend; a failed one neither feeds it nor
// makes it forget.
func TestListingFeedsTheTrend(t *testing.T) {
	var fail atomic.Bool
	var memory atomic.Int64
	memory.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 5 MiB more every round, answered or not.
		m := memory.Add(5)
		if fail.Load() {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
{"metadata":{"name":"cache-0","namespace":"apps"},"timestamp":"2026-11-23T12:00:00Z","window":"15s",
 "containers":[{"name":"app","usage":{"cpu":"100m","memory":"%dMi"}}]}]}`, m)
	}))
	defer srv.Close()
	cs, err := clientset.NewForConfig(&rest.Config{Host: srv.URL, QPS: 1000, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	clk := testclock.NewFakePassiveClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	l := &Listing{Client: cs.CoreV1().RESTClient(), Clock: clk, TTL: 10 * time.Second, Trend: &Trend{}}
	ctx := context.Background()
	pod := types.NamespacedName{Namespace: "apps", Name: "cache-0"}
	for i := range 24 {
		// One failed list in the middle changes nothing.
		fail.Store(i == 12)
		l.Sample(ctx)
		clk.SetTime(clk.Now().Add(30 * time.Second))
	}
	g, ok := l.Trend.Growth(pod)
	if !ok {
		t.Fatalf("5 MiB per 30s sample is not growth: %+v", g)
	}
	if r := g.MiBPerMinute(); r < 9.5 || r > 10.5 {
		t.Errorf("%.2f MiB/min, want 10", r)
	}
	if n := len(l.Trend.pods[pod]); n != 23 {
		t.Errorf("%d samples, want 23 (24 rounds, one failed)", n)
	}
}
