package agreement

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

// node's windows disagree on purpose: each resource is over its threshold
// on some statistics and under it on others.
//
//	cpu    (threshold 85): Average 70, P95 84, Latest 90 → hot on Latest only
//	memory (threshold 90): Average 80, P95 92, Latest 95 → hot on P95 and Latest
var node = plugintest.NodeStats{CPU: 70, CPUP95: 84, CPULatest: 90, Memory: 80, MemoryP95: 92, MemoryLatest: 95}

var thresholds = map[usage.Resource]float64{usage.CPU: 85, usage.Memory: 90}

// TestHotAlike checks, for every thresholdStatistics setting, that the
// scheduler's LoadAware Filter rejects the node for exactly the resources the
// descheduler's LoadAwareBalance finds above its high thresholds, both
// configured with the same statistics and thresholds.
func TestHotAlike(t *testing.T) {
	tests := []struct {
		name  string
		stats loadmodel.Statistics
		want  []usage.Resource // the resources that make the node hot
	}{
		{name: "defaults", stats: nil, want: []usage.Resource{usage.Memory}},
		{name: "average, average", stats: loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.Average}},
		{name: "average, latest", stats: loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.Latest}, want: []usage.Resource{usage.Memory}},
		{name: "average, p95", stats: loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.P95}, want: []usage.Resource{usage.Memory}},
		{name: "latest, average", stats: loadmodel.Statistics{usage.CPU: loadmodel.Latest, usage.Memory: loadmodel.Average}, want: []usage.Resource{usage.CPU}},
		{name: "latest, latest", stats: loadmodel.Statistics{usage.CPU: loadmodel.Latest, usage.Memory: loadmodel.Latest}, want: []usage.Resource{usage.CPU, usage.Memory}},
		{name: "latest, p95", stats: loadmodel.Statistics{usage.CPU: loadmodel.Latest, usage.Memory: loadmodel.P95}, want: []usage.Resource{usage.CPU, usage.Memory}},
		{name: "p95, average", stats: loadmodel.Statistics{usage.CPU: loadmodel.P95, usage.Memory: loadmodel.Average}},
		{name: "p95, latest", stats: loadmodel.Statistics{usage.CPU: loadmodel.P95, usage.Memory: loadmodel.Latest}, want: []usage.Resource{usage.Memory}},
		{name: "p95, p95", stats: loadmodel.Statistics{usage.CPU: loadmodel.P95, usage.Memory: loadmodel.P95}, want: []usage.Resource{usage.Memory}},
		{name: "memory only, cpu on the default", stats: loadmodel.Statistics{usage.Memory: loadmodel.Average}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := plugintest.Snapshot(time.Now().Add(-10*time.Second), map[string]plugintest.NodeStats{"n": node})

			scheduler := schedulerHot(t, snap, tt.stats)
			descheduler := deschedulerHot(t, snap, tt.stats)
			if diff := cmp.Diff(tt.want, scheduler); diff != "" {
				t.Errorf("LoadAware filters on (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(scheduler, descheduler); diff != "" {
				t.Errorf("LoadAwareBalance disagrees with LoadAware (-scheduler,+descheduler):\n%s", diff)
			}
		})
	}
}

// schedulerHot runs LoadAware's Filter on the node for a pod too small to
// matter and returns the resources it rejects the node for.
func schedulerHot(t *testing.T, snap *usage.Snapshot, stats loadmodel.Statistics) []usage.Resource {
	t.Helper()
	args := &config.LoadAwareArgs{Settings: loadmodel.Settings{Thresholds: thresholds, ThresholdStatistics: stats}}
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: snap}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return loadaware.New(ctx, args, h, tracker)
	}
	fw := plugintest.NewFramework(t, loadaware.Name, factory, []string{"PreFilter", "Filter"},
		[]*v1.Node{plugintest.Node("n", "4", "8Gi", 110)}, nil)
	// 1m of 4 CPUs and 1 byte of 8Gi: under a hundredth of a point.
	pod := plugintest.Pod("p", "", "1m", "1")
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, "n"))
	if st.IsSuccess() {
		return nil
	}
	if st.Code() != fwk.Unschedulable {
		t.Fatalf("Filter: %v", st)
	}
	var hot []usage.Resource
	for _, reason := range st.Reasons() {
		for _, r := range usage.Resources {
			if strings.HasPrefix(reason, "predicted "+string(r)+" usage") {
				hot = append(hot, r)
			}
		}
	}
	slices.Sort(hot)
	return hot
}

// deschedulerHot classifies the node as LoadAwareBalance does, with its
// args defaulted and validated as the descheduler's scheme does them.
func deschedulerHot(t *testing.T, snap *usage.Snapshot, stats loadmodel.Statistics) []usage.Resource {
	t.Helper()
	args := &loadawarebalance.LoadAwareBalanceArgs{HighThresholds: thresholds, EvictionArgs: balance.EvictionArgs{ThresholdStatistics: stats}}
	loadawarebalance.SetDefaults_LoadAwareBalanceArgs(args)
	args.LowThresholds = balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 60}
	if err := loadawarebalance.ValidateLoadAwareBalanceArgs(args); err != nil {
		t.Fatalf("descheduler args: %v", err)
	}
	load, ok := balance.ReadLoad(snap, "n", usage.Window(args.Window.Duration), args.ThresholdStatistics, args.HighThresholds)
	if !ok {
		t.Fatal("no usage for the node")
	}
	return args.HighThresholds.Above(load)
}
