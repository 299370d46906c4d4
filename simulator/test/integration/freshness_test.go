package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/simulator/sim/stack"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/cluster/metricsapi"
	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
	"github.com/ballast-sched/ballast/simulator/simvalues"
)

// freshnessSteps is how many usage steps BenchmarkFreshness times by
// default (BALLAST_BENCH_STEPS overrides it).
const freshnessSteps = 10

// metricResolution is how often the stand-in metrics-server scrapes: its
// --metric-resolution default, and what k3s runs it with.
const metricResolution = 15 * time.Second

// BenchmarkFreshness times how long a step in a node's real usage takes to
// reach (0) the metrics API, (a) load-watcher's API and (b) the scheduler's
// LoadAware score for that node, with the chart's default intervals:
// load-watcher samples the metrics API every --period (read from the
// rendered chart), paced to follow metrics-server's scrapes, and the
// scheduler's client reads load-watcher every client.DefaultInterval. Every
// part is the shipped code: load-watcher's metrics-server provider through
// the real k8s.io/metrics client, its collector, its HTTP API on a real
// listener, the scheduler's load-watcher client, usage tracker and the
// LoadAware plugin in a real scheduler framework (scheme-default args, which
// the chart renders). Only metrics-server is a stand-in: it scrapes the
// node's usage every metricResolution and serves the newest scrape, as
// metrics-server does (the kubelet's own collection delay comes on top,
// docs/performance.md).
//
// Where the upstream peer is built (make peers-bins), it also times (c)
// until scheduler-plugins' Trimaran kube-scheduler, reading this
// load-watcher's /watcher with its own client, has fetched the step: its
// plugins score from the last answer fetched.
//
// The node's memory alternates between 30 % and 70 % of 8 GiB; each step
// comes at a random moment of the scrape interval, after load-watcher has
// run for eight periods, so the figures cover every phase of the loops.
// Run with -benchtime=1x.
func BenchmarkFreshness(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a control plane; skipped with -short")
	}
	steps := freshnessSteps
	if v := os.Getenv("BALLAST_BENCH_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("BALLAST_BENCH_STEPS=%q: want a whole number of at least 2", v)
		}
		steps = n
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chart, err := simvalues.Render(ctx, nil)
	if err != nil {
		b.Fatalf("rendering the chart's defaults: %v", err)
	}
	c, err := cluster.Start(b, cluster.Options{ControllerWorkers: 1})
	if err != nil {
		b.Fatal(err)
	}
	const node = "node-a"
	for _, n := range []string{node, "node-b"} {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"}); err != nil {
			b.Fatal(err)
		}
	}
	src := metricsapi.NewSettable()
	src.Resolution = metricResolution
	low, high := "2457Mi", "5734Mi" // 30 % and 70 % of 8Gi
	src.Set(node, "800m", low)
	src.Set("node-b", "800m", low)

	// load-watcher, as its binary wires it.
	metrics, err := metricsapi.Start(src)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = metrics.Stop(context.Background()) }()
	mc, err := metricsclient.NewForConfig(metrics.RestConfig())
	if err != nil {
		b.Fatal(err)
	}
	prov, err := metricsserver.New(metricsserver.Config{Client: mc})
	if err != nil {
		b.Fatal(err)
	}
	nodes := collector.NewInformerNodes(c.Client)
	if err := nodes.Start(ctx); err != nil {
		b.Fatal(err)
	}
	col, err := collector.New(collector.Config{Provider: prov, Nodes: nodes, Period: chart.Period, Windows: chart.Windows})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = col.Run(ctx) }()
	started := time.Now()
	handler := server.NewHandler(server.Options{Source: col})
	go handler.WarmLoop(ctx)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	// Only the upstream pair's client reads /watcher here: the tap records
	// what each of its answers said of the node.
	tap := &watcherTap{next: handler, node: node}
	srv := &http.Server{Handler: tap, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	defer func() { _ = srv.Close() }()
	address := "http://" + lis.Addr().String()

	// The upstream pair, where the peer is built (make peers-bins):
	// scheduler-plugins' Trimaran kube-scheduler reading this load-watcher
	// through its own, unmodified client, which fetches every
	// stack.TrimaranPoll; its plugins score from the last answer fetched.
	peer := false
	if bin, err := stack.FindPeerScheduler(); err != nil {
		fmt.Printf("the upstream pair is not measured: %v\n", err)
	} else {
		p, err := stack.StartPeerScheduler(ctx, bin, b.TempDir(), c.KubeconfigPath(), address, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Stop()
		peer = true
	}

	// The scheduler's side, as ballast-scheduler wires it in service mode:
	// load-watcher's client, the usage tracker and LoadAware. A scheduler
	// starts at any moment of load-watcher's period; each step gets a new
	// one, started at a random moment of the client's interval before the
	// step, so that the two loops are not in step with each other.
	nodeList := []*corev1.Node{plugintest.Node(node, "4", "8Gi", 110), plugintest.Node("node-b", "4", "8Gi", 110)}
	pod := plugintest.Pod("probe", "", "100m", "128Mi")
	newScheduler := func() (score func() int64, stop func()) {
		sctx, stop := context.WithCancel(ctx)
		sched, err := client.New(client.Config{Address: address})
		if err != nil {
			b.Fatal(err)
		}
		go sched.Run(sctx)
		tracker := nodeload.NewTracker(sched, nodeload.Options{Registerer: prometheus.NewRegistry()})
		fw := plugintest.NewFramework(b, loadaware.Name, func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return loadaware.New(ctx, nil, h, tracker)
		}, []string{"PreScore", "Score"}, nodeList, nil)
		return func() int64 { return fw.Scores(b, framework.NewCycleState(), pod)[node] }, stop
	}

	// A probe reads load-watcher's API much more often than the scheduler
	// does, to see when it serves the step.
	probe, err := client.New(client.Config{Address: address})
	if err != nil {
		b.Fatal(err)
	}
	served := func() (float64, bool) {
		if err := probe.Refresh(ctx); err != nil {
			return 0, false
		}
		nu, ok := probe.Snapshot().Nodes[node]
		if !ok {
			return 0, false
		}
		s, ok := nu.Get(usage.Window1m, usage.Memory)
		return s.Latest, ok
	}
	waitFor := func(what string, deadline time.Duration, done func() bool) time.Duration {
		start := time.Now()
		for !done() {
			if time.Since(start) > deadline {
				b.Fatalf("%s did not happen within %s", what, deadline)
			}
			time.Sleep(20 * time.Millisecond)
		}
		return time.Since(start)
	}
	// What the metrics API serves, read as load-watcher's provider reads it.
	inAPI := func() float64 {
		m, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return 0
		}
		return 100 * float64(m.Usage.Memory().Value()) / float64(8<<30)
	}
	rounds := func() float64 {
		families, err := col.Gatherer().Gather()
		if err != nil {
			b.Fatal(err)
		}
		var n float64
		for _, f := range families {
			if f.GetName() == "load_watcher_sampling_rounds_total" {
				for _, m := range f.GetMetric() {
					n += m.GetCounter().GetValue()
				}
			}
		}
		return n
	}
	limit := metricResolution + 3*chart.Period + 3*client.DefaultInterval
	// Settle: load-watcher serves the low level, and has run for eight
	// periods (a load-watcher in a cluster has run for long) before the
	// first step.
	waitFor("load-watcher serving the node", limit, func() bool {
		v, ok := served()
		return ok && v > 29 && v < 31
	})
	time.Sleep(time.Until(started.Add(8 * chart.Period)))
	roundsBefore, stepsFrom := rounds(), time.Now()

	rng := rand.New(rand.NewPCG(1, 16))
	for i := 0; i < b.N; i++ {
		var toMetrics, toAPI, toScore, toPeer []time.Duration
		for step := 0; step < steps; step++ {
			time.Sleep(time.Duration(rng.Int64N(int64(metricResolution))))
			score, stop := newScheduler()
			waitFor("the scheduler's first score", limit, func() bool { return score() != nodeload.NeutralScore })
			time.Sleep(time.Duration(rng.Int64N(int64(client.DefaultInterval))))
			before := score()
			level, want := high, 70.0
			if step%2 == 1 {
				level, want = low, 30
			}
			stepped := time.Now()
			src.Set(node, "800m", level)
			waitFor("the metrics API serving the step", limit, func() bool {
				v := inAPI()
				return v > want-1 && v < want+1
			})
			toMetrics = append(toMetrics, time.Since(stepped))
			waitFor("load-watcher serving the step", limit, func() bool {
				v, ok := served()
				return ok && v > want-1 && v < want+1
			})
			toAPI = append(toAPI, time.Since(stepped))
			waitFor("the score changing", limit, func() bool { return score() != before })
			toScore = append(toScore, time.Since(stepped))
			peerSaw := ""
			if peer {
				var at time.Time
				waitFor("the upstream pair fetching the step", limit+stack.TrimaranPoll, func() bool {
					var ok bool
					at, ok = tap.first(stepped, want)
					return ok
				})
				toPeer = append(toPeer, at.Sub(stepped))
				peerSaw = fmt.Sprintf(", Trimaran fetched it after %s", toPeer[step].Round(time.Millisecond))
			}
			// Printed rather than logged: the cluster's own log lines would
			// push a benchmark's log past what go test shows.
			fmt.Printf("step %d to %.0f %%: metrics API after %s, load-watcher after %s, score %d→%d after %s%s\n", step, want,
				toMetrics[step].Round(time.Millisecond), toAPI[step].Round(time.Millisecond), before, score(), toScore[step].Round(time.Millisecond), peerSaw)
			stop()
		}
		for _, m := range []struct {
			name string
			v    []time.Duration
		}{{"metrics-api", toMetrics}, {"load-watcher", toAPI}, {"score", toScore}, {"trimaran", toPeer}} {
			if len(m.v) == 0 {
				continue
			}
			b.ReportMetric(medianDuration(m.v).Seconds(), m.name+"-median-s")
			b.ReportMetric(slices.Max(m.v).Seconds(), m.name+"-max-s")
		}
		// The cost: load-watcher's requests to the metrics API per scrape
		// (1 would be one list per scrape; a 10 s period would be 1.5).
		perScrape := (rounds() - roundsBefore) / (float64(time.Since(stepsFrom)) / float64(metricResolution))
		b.ReportMetric(perScrape, "rounds-per-scrape")
		bound := metricResolution + chart.Period/5 + client.DefaultInterval
		fmt.Printf("freshness from a change in real usage: metrics API median %s, max %s; load-watcher API median %s, max %s; LoadAware score median %s, max %s "+
			"(bound: resolution %s + a retry %s + client interval %s = %s); %.2f load-watcher rounds per scrape\n",
			medianDuration(toMetrics).Round(time.Millisecond), slices.Max(toMetrics).Round(time.Millisecond),
			medianDuration(toAPI).Round(time.Millisecond), slices.Max(toAPI).Round(time.Millisecond),
			medianDuration(toScore).Round(time.Millisecond), slices.Max(toScore).Round(time.Millisecond),
			metricResolution, chart.Period/5, client.DefaultInterval, bound, perScrape)
		if peer {
			fmt.Printf("the upstream pair (Trimaran fetching this load-watcher every %s): median %s, max %s\n", stack.TrimaranPoll,
				medianDuration(toPeer).Round(time.Millisecond), slices.Max(toPeer).Round(time.Millisecond))
		}
	}
}

func medianDuration(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// watcherTap passes requests to next and records, for every /watcher
// answer, when it was sent and the node's newest memory figure in it.
type watcherTap struct {
	next http.Handler
	node string

	mu      sync.Mutex
	answers []tappedAnswer
}

type tappedAnswer struct {
	at     time.Time
	memory float64
}

func (t *watcherTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/watcher" {
		t.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	t.next.ServeHTTP(rec, r)
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	body := rec.Body.Bytes()
	_, _ = w.Write(body)
	var answer struct {
		Data struct {
			NodeMetricsMap map[string]struct {
				Metrics []struct {
					Type, Operator string
					Value          float64
				}
			}
		}
	}
	if rec.Code != http.StatusOK || json.Unmarshal(body, &answer) != nil {
		return
	}
	for _, m := range answer.Data.NodeMetricsMap[t.node].Metrics {
		if m.Type == "Memory" && m.Operator == "Latest" {
			t.mu.Lock()
			t.answers = append(t.answers, tappedAnswer{at: time.Now(), memory: m.Value})
			t.mu.Unlock()
		}
	}
}

// first returns when the first answer after since said the node's memory
// was want (±1).
func (t *watcherTap) first(since time.Time, want float64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.answers {
		if a.at.After(since) && a.memory > want-1 && a.memory < want+1 {
			return a.at, true
		}
	}
	return time.Time{}, false
}
