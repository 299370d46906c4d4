// Package cluster tests load-watcher against the in-process Kubernetes
// cluster of simulator/cluster: a real kube-apiserver whose Nodes are
// added and removed while load-watcher runs, and NodeMetrics served the
// way metrics-server serves them. It is the only place the load-watcher
// module links k8s.io/kubernetes. Skipped by `go test -short`.
package cluster

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	simcluster "github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/cluster/metricsapi"
	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
)

func TestNodesAddedAndRemovedAreTracked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := simcluster.Start(t, simcluster.Options{})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	src := metricsapi.NewSettable()
	ms, err := metricsapi.Start(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ms.Stop(context.Background()) })

	for _, n := range []simcluster.NodeSpec{{Name: "alpha", CPU: "4", Memory: "8Gi"}, {Name: "beta", CPU: "2", Memory: "4Gi"}} {
		if _, err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	src.Set("alpha", "1", "2Gi")    // 25 %, 25 %
	src.Set("beta", "1500m", "3Gi") // 75 %, 75 %
	src.Set("ghost", "1", "1Gi")    // metrics for a node the cluster does not have

	// The server side: metrics-server provider, Node informer, HTTP API.
	mc, err := metricsclient.NewForConfig(ms.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	prov, err := metricsserver.New(metricsserver.Config{Client: mc})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	col, err := collector.New(collector.Config{Provider: prov, Nodes: collector.NewInformerNodes(cs), Period: 200 * time.Millisecond, Windows: []usage.Window{usage.Window1m}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = col.Run(ctx) }()
	h := server.NewHandler(server.Options{Source: col})
	go h.WarmLoop(ctx)
	api := httptest.NewServer(h)
	t.Cleanup(api.Close)

	// The consumer side, both ways: HTTP client and library mode.
	hc, err := client.New(client.Config{Address: api.URL, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go hc.Run(ctx)
	lib, err := inprocess.New(inprocess.Config{Source: prov, RestConfig: c.RestConfig, Period: 200 * time.Millisecond, Windows: []usage.Window{usage.Window1m}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = lib.Run(ctx) }()
	consumers := map[string]interface{ Snapshot() *usage.Snapshot }{"http client": hc, "library mode": lib}

	expect := func(step string, want map[string]float64) {
		t.Helper()
		for name, cons := range consumers {
			waitFor(ctx, t, step+" ("+name+")", func() string { return diffUsage(cons.Snapshot(), want) })
		}
	}
	expect("initial nodes", map[string]float64{"alpha": 25, "beta": 75})

	// A node joins: it appears without a restart.
	if _, err := c.AddNode(ctx, simcluster.NodeSpec{Name: "gamma", CPU: "8", Memory: "16Gi"}); err != nil {
		t.Fatal(err)
	}
	src.Set("gamma", "2", "4Gi") // 25 %
	expect("after adding gamma", map[string]float64{"alpha": 25, "beta": 75, "gamma": 25})

	// A node leaves: it drops out although metrics for it keep coming.
	if err := c.RemoveNode(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	expect("after removing beta", map[string]float64{"alpha": 25, "gamma": 25})

	// A node without metrics is reported as such, never as 0 %.
	if _, err := c.AddNode(ctx, simcluster.NodeSpec{Name: "delta"}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "delta listed without samples", func() string {
		if st := col.Status(); !slices.Contains(st.NodesWithoutSamples, "delta") {
			return fmt.Sprintf("nodes without samples = %v", st.NodesWithoutSamples)
		}
		return ""
	})
	if _, ok := hc.Snapshot().Nodes["delta"]; ok {
		t.Errorf("delta has usage in the client snapshot, want none")
	}
}

// diffUsage describes how snap differs from want (node → CPU and memory
// latest percent); "" when it matches.
func diffUsage(snap *usage.Snapshot, want map[string]float64) string {
	if snap == nil {
		return "no snapshot yet"
	}
	var got []string
	for name := range snap.Nodes {
		got = append(got, name)
	}
	sort.Strings(got)
	var wantNames []string
	for name := range want {
		wantNames = append(wantNames, name)
	}
	sort.Strings(wantNames)
	if !slices.Equal(got, wantNames) {
		return fmt.Sprintf("nodes %v, want %v", got, wantNames)
	}
	for name, pct := range want {
		n, ok := snap.Node(name)
		if !ok {
			return name + " is stale"
		}
		for _, res := range usage.Resources {
			if st, ok := n.Get(usage.Window1m, res); !ok || st.Latest != pct {
				return fmt.Sprintf("%s %s latest = %v (present %v), want %v", name, res, st.Latest, ok, pct)
			}
		}
	}
	return ""
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		if last = cond(); last == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: gave up: %s", what, last)
		case <-tick.C:
		}
	}
}
