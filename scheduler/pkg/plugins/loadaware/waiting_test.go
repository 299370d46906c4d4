package loadaware

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

// A pod no node takes because every node is too hot waits for a node to
// cool down; a pod that is placed, or that other plugins turned away while
// LoadAware let it through everywhere, does not.
func TestPostFilterKeepsPodsRejectedForUsage(t *testing.T) {
	stats := map[string]plugintest.NodeStats{"hot-1": {CPU: 30, Memory: 95}, "hot-2": {CPU: 90, Memory: 40}, "cool": {CPU: 10, Memory: 10}}
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(time.Now(), stats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	var pl *LoadAware
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		var err error
		pl, err = New(ctx, nil, h, tracker)
		return pl, err
	}
	var nodes []*v1.Node
	for _, n := range []string{"hot-1", "hot-2", "cool"} {
		nodes = append(nodes, plugintest.Node(n, "4", "8Gi", 110))
	}
	fw := plugintest.NewFramework(t, Name, factory, []string{"PreFilter", "Filter", "PostFilter", "Reserve"}, nodes, nil)
	ctx := context.Background()
	try := func(pod *v1.Pod, nodes ...string) {
		t.Helper()
		state := framework.NewCycleState()
		if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
			t.Fatalf("PreFilter: %v", st)
		}
		rejected := false
		for _, n := range nodes {
			rejected = !fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, n)).IsSuccess() || rejected
		}
		if !rejected {
			return
		}
		if _, st := fw.RunPostFilterPlugins(ctx, state, pod, framework.NewDefaultNodeToStatus()); st.Code() != fwk.Unschedulable {
			t.Fatalf("PostFilter: %v, want Unschedulable (it never places a pod)", st)
		}
	}
	try(newPod(), "hot-1", "hot-2")
	if got := pl.waiting.Len(); got != 1 {
		t.Fatalf("after a pod every node rejected: %d waiting, want 1", got)
	}
	for _, r := range []string{"cpu", "memory"} {
		if got := testutil.ToFloat64(tracker.Metrics().Filtered.WithLabelValues(Name, r)); got != 1 {
			t.Errorf("filtered %s counter after PostFilter = %v, want 1", r, got)
		}
	}
	// Placed on the next try: it no longer waits.
	if st := fw.RunReservePluginsReserve(ctx, framework.NewCycleState(), newPod(), "cool"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	if got := pl.waiting.Len(); got != 0 {
		t.Errorf("after the pod was placed: %d waiting, want 0", got)
	}
	// Let through by LoadAware everywhere it was tried.
	try(plugintest.Pod("other", "", "200m", "256Mi"), "cool")
	if got := pl.waiting.Len(); got != 0 {
		t.Errorf("after a pod LoadAware let through: %d waiting, want 0", got)
	}
}
