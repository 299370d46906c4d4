package loadaware

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadvariationriskbalancing"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/podcountbalance"
)

// BenchmarkFilterAndScore measures one pod's PreFilter, Filter on every
// node, PreScore and Score on every node through the real framework, with
// Ballast's scoring as the shipped profiles run it (shipped: LoadAware with
// its variation risk and pod count terms) and as three plugins
// (three-plugins: LoadAware, LoadVariationRiskBalancing and
// PodCountBalance, as configurations that name them run), over 500 and
// 5 000 nodes that each hold 10 pods bound since the last sample (the
// anti-herding cache at its busiest). ns/node is the time per node and pod
// of all extension points together.
func BenchmarkFilterAndScore(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		for _, setup := range []string{"shipped", "three-plugins"} {
			b.Run(fmt.Sprintf("nodes=%d/%s", nodes, setup), func(b *testing.B) {
				benchmarkFilterAndScore(b, nodes, setup)
			})
		}
	}
}

func benchmarkFilterAndScore(b *testing.B, n int, setup string) {
	stats := map[string]plugintest.NodeStats{}
	var nodes []*v1.Node
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%04d", i)
		nodes = append(nodes, plugintest.Node(name, "8", "16Gi", 110))
		stats[name] = plugintest.NodeStats{CPU: 10 + float64(i%50), Memory: 20 + float64(i%50), CPUStd: 5, MemoryStd: 2}
	}
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(time.Now().Add(-time.Second), stats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	for i := 0; i < 10*n; i++ {
		tracker.Reserve(context.Background(), plugintest.Pod(fmt.Sprintf("p%d", i), "", "100m", "128Mi"), nodes[i%n].Name)
	}
	withTracker := func(build func(context.Context, runtime.Object, fwk.Handle, *nodeload.Tracker) (fwk.Plugin, error)) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return build(ctx, obj, h, tracker)
		}
	}
	all := []string{"PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Reserve"}
	var plugins []plugintest.Plugin
	switch setup {
	case "shipped":
		plugins = []plugintest.Plugin{{Name: Name, New: withTracker(newLoadAware(shipped())), Extensions: all, Weight: 7}}
	case "three-plugins":
		plugins = []plugintest.Plugin{
			{Name: Name, New: withTracker(newLoadAware(nil)), Extensions: all, Weight: 5},
			{Name: loadvariationriskbalancing.Name, Weight: 1, Extensions: []string{"PreScore", "Score", "Reserve"},
				New: withTracker(func(ctx context.Context, obj runtime.Object, h fwk.Handle, tr *nodeload.Tracker) (fwk.Plugin, error) {
					return loadvariationriskbalancing.New(ctx, nil, h, tr)
				})},
			{Name: podcountbalance.Name, New: podcountbalance.New, Extensions: []string{"Score"}, Weight: 1},
		}
	}
	fw := plugintest.NewFrameworkOf(b, plugins, nodes, nil)
	pod := newPod()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		state := framework.NewCycleState()
		fw.RunPreFilterPlugins(ctx, state, pod)
		for _, n := range fw.Nodes {
			fw.RunFilterPlugins(ctx, state, pod, n)
		}
		fw.RunPreScorePlugins(ctx, state, pod, fw.Nodes)
		fw.RunScorePlugins(ctx, state, pod, fw.Nodes)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
}
