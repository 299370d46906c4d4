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
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

// BenchmarkFilterAndScore500Nodes measures one pod's PreFilter, Filter,
// PreScore and Score over 500 nodes that each hold 10 pods bound since the
// last sample (the anti-herding cache at its busiest).
func BenchmarkFilterAndScore500Nodes(b *testing.B) {
	stats := map[string]plugintest.NodeStats{}
	var nodes []*v1.Node
	for i := 0; i < 500; i++ {
		name := fmt.Sprintf("node-%03d", i)
		nodes = append(nodes, plugintest.Node(name, "8", "16Gi", 110))
		stats[name] = plugintest.NodeStats{CPU: 10 + float64(i%50), Memory: 20 + float64(i%50)}
	}
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(time.Now().Add(-time.Second), stats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	for i := 0; i < 5000; i++ {
		tracker.Reserve(context.Background(), plugintest.Pod(fmt.Sprintf("p%d", i), "", "100m", "128Mi"), nodes[i%500].Name)
	}
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return New(ctx, nil, h, tracker)
	}
	fw := plugintest.NewFramework(b, Name, factory, []string{"PreFilter", "Filter", "PreScore", "Score"}, nodes, nil)
	pod := newPod()
	ctx := context.Background()
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
}
