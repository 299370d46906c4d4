package loadaware

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

var sampled = time.Now().Add(-10 * time.Second)

func setup(t *testing.T, args *config.LoadAwareArgs, stats map[string]plugintest.NodeStats, nodes ...string) (*plugintest.Framework, *nodeload.Tracker) {
	t.Helper()
	fw, tracker, _ := setupPlugin(t, args, stats, nodes...)
	return fw, tracker
}

// setupPlugin is setup, and also returns the plugin the framework runs.
func setupPlugin(t *testing.T, args *config.LoadAwareArgs, stats map[string]plugintest.NodeStats, nodes ...string) (*plugintest.Framework, *nodeload.Tracker, *LoadAware) {
	t.Helper()
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(sampled, stats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	var ns []*v1.Node
	for _, n := range nodes {
		ns = append(ns, plugintest.Node(n, "4", "8Gi", 110))
	}
	var pl *LoadAware
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		var err error
		pl, err = New(ctx, args, h, tracker)
		return pl, err
	}
	fw := plugintest.NewFramework(t, Name, factory, []string{"PreFilter", "Filter", "PreScore", "Score", "Reserve"}, ns, nil)
	return fw, tracker, pl
}

// The pod asks for 200m of 4 CPUs (5 %) and 256Mi of 8Gi (3.125 %).
func newPod() *v1.Pod { return plugintest.Pod("web", "", "200m", "256Mi") }

func TestFilter(t *testing.T) {
	stats := map[string]plugintest.NodeStats{
		"cool":      {CPU: 30, Memory: 40},
		"hot-mem":   {CPU: 30, Memory: 88},   // 88 + 3.125 = 91.1 > 90
		"hot-cpu":   {CPU: 81, Memory: 40},   // 81 + 5 = 86 > 85
		"at-limit":  {CPU: 80, Memory: 86.5}, // 80 + 5 = 85 and 86.5 + 3.125 = 89.6: not above
		"stale":     {CPU: 99, Memory: 99, Stale: true},
		"nan":       {CPU: math.NaN(), Memory: 50},
		"over-full": {CPU: 130, Memory: 40},
	}
	fw, tracker := setup(t, nil, stats, "cool", "hot-mem", "hot-cpu", "at-limit", "stale", "nan", "over-full", "new")
	tests := []struct {
		node       string
		wantReason string // empty: the node passes
	}{
		{node: "cool"},
		{node: "hot-mem", wantReason: "predicted memory usage 91.1 exceeds threshold 90 (percent of allocatable: node 88.0 + recently bound pods 0.0 + this pod 3.1)"},
		{node: "hot-cpu", wantReason: "predicted cpu usage 86.0 exceeds threshold 85 (percent of allocatable: node 81.0 + recently bound pods 0.0 + this pod 5.0)"},
		{node: "at-limit"},
		{node: "stale"}, // falls back to requests
		{node: "nan"},   // not trusted, falls back to requests
		{node: "over-full", wantReason: "predicted cpu usage 135.0 exceeds threshold 85 (percent of allocatable: node 130.0 + recently bound pods 0.0 + this pod 5.0)"},
		{node: "new"}, // no usage yet
	}
	ctx := context.Background()
	state := framework.NewCycleState()
	pod := newPod()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, tt.node))
			if tt.wantReason == "" {
				if !st.IsSuccess() {
					t.Errorf("Filter rejected %s: %v", tt.node, st.Reasons())
				}
				return
			}
			if st.Code() != fwk.Unschedulable {
				t.Fatalf("Filter code = %v, want Unschedulable", st.Code())
			}
			if diff := cmp.Diff([]string{tt.wantReason}, st.Reasons()); diff != "" {
				t.Errorf("reasons (-want,+got):\n%s", diff)
			}
		})
	}
	// The thresholds are exported with what of load-watcher's usage they
	// compare (the defaults: the 5m mean of cpu, the newest memory sample).
	for labels, want := range map[[3]string]float64{{"cpu", "5m", "avg"}: 85, {"memory", "5m", "latest"}: 90} {
		if got := testutil.ToFloat64(tracker.Metrics().Thresholds.WithLabelValues(Name, labels[0], labels[1], labels[2])); got != want {
			t.Errorf("threshold %v = %v, want %v", labels, got, want)
		}
	}
	// The cycle adds its rejections to the metric once the pod is placed.
	if got := testutil.ToFloat64(tracker.Metrics().Filtered.WithLabelValues(Name, "cpu")); got != 0 {
		t.Errorf("filtered cpu counter before the pod was placed = %v, want 0", got)
	}
	if st := fw.RunReservePluginsReserve(ctx, state, pod, "cool"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	if got := testutil.ToFloat64(tracker.Metrics().Filtered.WithLabelValues(Name, "cpu")); got != 2 {
		t.Errorf("filtered cpu counter = %v, want 2 (hot-cpu, over-full)", got)
	}
	// One event per cause for this pod: stale, invalid and missing; and
	// the event of its placement, with the figures it was placed by.
	var events []string
	var placed string
	for _, e := range fw.Events() {
		if strings.Contains(e, ReasonPlaced) {
			placed = e
			continue
		}
		events = append(events, e)
	}
	if len(events) != 3 {
		t.Errorf("events = %q, want 3 (one per cause)", events)
	}
	for _, want := range []string{"Placed on cool by load: cpu 30.0%+0.0%+5.0%=35.0% (threshold 85%), memory 40.0%+0.0%+3.1%=43.1% (threshold 90%)",
		"rejected for load: ", "hot-mem (predicted memory usage 91.1 exceeds threshold 90", "hot-cpu (", "over-full ("} {
		if !strings.Contains(placed, want) {
			t.Errorf("placement event %q lacks %q", placed, want)
		}
	}
	for _, cause := range []nodeload.Cause{nodeload.CauseStale, nodeload.CauseInvalid, nodeload.CauseMissing} {
		if !strings.Contains(strings.Join(events, "\n"), string(cause)) {
			t.Errorf("no %s event in %q", cause, events)
		}
	}
}

// Memory is judged on the newest sample by default, CPU on the window's
// mean; thresholdStatistics changes either.
func TestFilterStatistics(t *testing.T) {
	stats := map[string]plugintest.NodeStats{
		// A process has just taken memory: 93 % now, 60 % on average.
		"memory-taken": {CPU: 30, Memory: 60, MemoryLatest: 93},
		// One CPU burst: 95 % now, 40 % on average.
		"cpu-burst": {CPU: 40, CPULatest: 95, Memory: 40},
	}
	tests := []struct {
		name     string
		stats    map[usage.Resource]config.UsageStatistic
		rejected map[string]bool
	}{
		{name: "defaults", rejected: map[string]bool{"memory-taken": true}},
		{name: "memory on the average", stats: map[usage.Resource]config.UsageStatistic{usage.Memory: config.Average}},
		{name: "cpu on the latest sample", stats: map[usage.Resource]config.UsageStatistic{usage.CPU: config.Latest},
			rejected: map[string]bool{"memory-taken": true, "cpu-burst": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := &config.LoadAwareArgs{Settings: loadmodel.Settings{ThresholdStatistics: tt.stats}}
			fw, _ := setup(t, args, stats, "memory-taken", "cpu-burst")
			ctx, state, pod := context.Background(), framework.NewCycleState(), newPod()
			if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			for _, node := range []string{"memory-taken", "cpu-burst"} {
				st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, node))
				if got := st.Code() == fwk.Unschedulable; got != tt.rejected[node] {
					t.Errorf("%s rejected = %v, want %v (%v)", node, got, tt.rejected[node], st.Reasons())
				}
			}
		})
	}
}

func TestFilterNeverRejectsDaemonSetPods(t *testing.T) {
	fw, _ := setup(t, nil, map[string]plugintest.NodeStats{"hot": {CPU: 99, Memory: 99}}, "hot")
	pod := newPod()
	pod.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: ptr.To(true)}}
	ctx := context.Background()
	state := framework.NewCycleState()
	fw.RunPreFilterPlugins(ctx, state, pod)
	if st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, "hot")); !st.IsSuccess() {
		t.Errorf("DaemonSet pod rejected: %v", st.Reasons())
	}
	// The same pod owned by a ReplicaSet is rejected.
	pod.OwnerReferences[0].Kind = "ReplicaSet"
	state = framework.NewCycleState()
	fw.RunPreFilterPlugins(ctx, state, pod)
	if st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, "hot")); st.IsSuccess() {
		t.Errorf("ReplicaSet pod on a 99%% node passed")
	}
}

// System-critical pods (CoreDNS in replaceDefault mode, metrics-server) are
// not filtered by usage unless filterCriticalPods says so: a busy cluster
// must not lose DNS.
func TestFilterExemptsCriticalPods(t *testing.T) {
	nodes := map[string]plugintest.NodeStats{"hot": {CPU: 99, Memory: 99}}
	ctx := context.Background()
	filter := func(fw *plugintest.Framework, pod *v1.Pod) *fwk.Status {
		state := framework.NewCycleState()
		fw.RunPreFilterPlugins(ctx, state, pod)
		return fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, "hot"))
	}
	byClass := newPod()
	byClass.Spec.PriorityClassName = "system-cluster-critical"
	byPriority := newPod()
	byPriority.Spec.Priority = ptr.To[int32](2000001000) // system-node-critical, as admission sets it
	highUser := newPod()
	highUser.Spec.Priority = ptr.To[int32](1000000000) // the highest a user-defined class may have

	fw, _ := setup(t, nil, nodes, "hot")
	for name, pod := range map[string]*v1.Pod{"class": byClass, "priority": byPriority} {
		if st := filter(fw, pod); !st.IsSuccess() {
			t.Errorf("critical pod (%s) rejected: %v", name, st.Reasons())
		}
	}
	if st := filter(fw, highUser); st.IsSuccess() {
		t.Error("a high-priority user pod on a 99% node passed")
	}

	fw, _ = setup(t, &config.LoadAwareArgs{FilterCriticalPods: true}, nodes, "hot")
	if st := filter(fw, byClass); st.IsSuccess() {
		t.Error("filterCriticalPods: true, yet a critical pod passed a 99% node")
	}
}

func TestScore(t *testing.T) {
	stats := map[string]plugintest.NodeStats{
		"cool":  {CPU: 15, Memory: 16.875}, // cpu 15+5 = 20, memory 16.875+3.125 = 20
		"warm":  {CPU: 55, Memory: 36.875}, // cpu 60, memory 40
		"hot":   {CPU: 95, Memory: 96.875}, // cpu 100, memory 100
		"stale": {CPU: 10, Memory: 10, Stale: true},
	}
	tests := []struct {
		name string
		args *config.LoadAwareArgs
		want map[string]int64
	}{
		{
			// LeastLoaded, bottleneck: cool min(80, 80), warm min(40, 60), hot 0; stale neutral 50
			name: "least loaded",
			want: map[string]int64{"cool": 80, "warm": 40, "hot": 0, "stale": 50},
		},
		{
			// equal weights: cool (80+80)/2, warm (40+60)/2, hot (0+0)/2
			name: "least loaded, weighted mean",
			args: &config.LoadAwareArgs{Settings: loadmodel.Settings{ScoringStrategy: &config.ScoringStrategy{Combine: config.WeightedMean}}},
			want: map[string]int64{"cool": 80, "warm": 50, "hot": 0, "stale": 50},
		},
		{
			// memory weight 3: warm (1×40 + 3×60)/4 = 55
			name: "least loaded with memory weighing more",
			args: &config.LoadAwareArgs{Settings: loadmodel.Settings{ScoringStrategy: &config.ScoringStrategy{Combine: config.WeightedMean, Resources: []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 3}}}}},
			want: map[string]int64{"cool": 80, "warm": 55, "hot": 0, "stale": 50},
		},
		{
			// TargetPacking 60: cool 60+40×20/60 = 73.3 for both; warm cpu at the target 100,
			// memory 60+40×40/60 = 86.7: the bottleneck 86.7; hot 0
			name: "target packing",
			args: &config.LoadAwareArgs{Settings: loadmodel.Settings{ScoringStrategy: &config.ScoringStrategy{Type: config.TargetPacking, TargetUtilization: ptr.To(60.0)}}},
			want: map[string]int64{"cool": 73, "warm": 87, "hot": 0, "stale": 50},
		},
		{
			// warm: (100 + 86.7)/2 = 93.3
			name: "target packing, weighted mean",
			args: &config.LoadAwareArgs{Settings: loadmodel.Settings{ScoringStrategy: &config.ScoringStrategy{Type: config.TargetPacking, TargetUtilization: ptr.To(60.0), Combine: config.WeightedMean}}},
			want: map[string]int64{"cool": 73, "warm": 93, "hot": 0, "stale": 50},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw, _ := setup(t, tt.args, stats, "cool", "warm", "hot", "stale")
			got := fw.Scores(t, framework.NewCycleState(), newPod())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// Score rates each resource on the statistic Filter compares: a node whose
// memory a process has just taken scores low at once, while a single CPU
// burst does not move the scores.
func TestScoreUsesTheFilterStatistics(t *testing.T) {
	stats := map[string]plugintest.NodeStats{
		// Both average cpu 15 %, memory 16.875 % over the window (20 % with the pod).
		"memory-taken": {CPU: 15, Memory: 16.875, MemoryLatest: 76.875}, // memory 80 % now with the pod
		"cpu-burst":    {CPU: 15, CPULatest: 95, Memory: 16.875},
	}
	tests := []struct {
		name  string
		stats map[usage.Resource]config.UsageStatistic
		want  map[string]int64
	}{
		// memory-taken: cpu 80, memory 100−80 = 20 → the bottleneck 20; cpu-burst on the mean: 80.
		{name: "defaults", want: map[string]int64{"memory-taken": 20, "cpu-burst": 80}},
		{name: "memory on the average", stats: map[usage.Resource]config.UsageStatistic{usage.Memory: config.Average},
			want: map[string]int64{"memory-taken": 80, "cpu-burst": 80}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw, _ := setup(t, &config.LoadAwareArgs{Settings: loadmodel.Settings{ThresholdStatistics: tt.stats}}, stats, "memory-taken", "cpu-burst")
			if diff := cmp.Diff(tt.want, fw.Scores(t, framework.NewCycleState(), newPod())); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestAntiHerding places pods one after another without new usage samples:
// every reserved pod counts on its node, so the cool node stops looking cool.
func TestAntiHerding(t *testing.T) {
	stats := map[string]plugintest.NodeStats{"a": {CPU: 10, Memory: 10}, "b": {CPU: 20, Memory: 10}}
	weights := &config.LoadAwareArgs{Settings: loadmodel.Settings{ScoringStrategy: &config.ScoringStrategy{Resources: []config.ResourceSpec{{Name: "cpu", Weight: 1}}}}}
	fw, _ := setup(t, weights, stats, "a", "b")
	ctx := context.Background()
	var placed []string
	for i := 0; i < 4; i++ {
		pod := plugintest.Pod("p"+string(rune('0'+i)), "", "200m", "")
		pod.UID = pod.UID + "-uid"
		state := framework.NewCycleState()
		scores := fw.Scores(t, state, pod)
		best := "a"
		if scores["b"] > scores["a"] {
			best = "b"
		}
		if st := fw.RunReservePluginsReserve(ctx, state, pod, best); !st.IsSuccess() {
			t.Fatalf("Reserve: %v", st)
		}
		placed = append(placed, best)
	}
	// a: 10+5 → 85 vs b: 20+5 → 75: a. a: 10+5+5 → 80 vs 75: a.
	// a: 10+10+5 → 75 vs b 75: tie, a (first). a: 10+15+5 → 70 vs 75: b.
	if diff := cmp.Diff([]string{"a", "a", "a", "b"}, placed); diff != "" {
		t.Errorf("placements (-want,+got):\n%s", diff)
	}
}

func TestInvalidArgsNameTheField(t *testing.T) {
	args := &config.LoadAwareArgs{
		Settings: loadmodel.Settings{
			Thresholds:      map[usage.Resource]float64{usage.CPU: 150},
			ScoringStrategy: &config.ScoringStrategy{Type: "Random"},
		},
	}
	_, err := New(context.Background(), args, nil, nodeload.NewTracker(nil, nodeload.Options{}))
	if err == nil {
		t.Fatal("New accepted invalid args")
	}
	for _, want := range []string{"thresholds[cpu]", "scoringStrategy.type"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := New(context.Background(), &config.LoadVariationRiskBalancingArgs{}, nil, nil); err == nil || !strings.Contains(err.Error(), "want args to be of type LoadAwareArgs") {
		t.Errorf("wrong args type: err = %v", err)
	}
}

func TestSignPod(t *testing.T) {
	fw, _ := setup(t, nil, nil, "n1")
	base := fw.Signature(t, newPod())
	daemon := newPod()
	daemon.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", UID: "ds", Controller: ptr.To(true)}}
	critical := newPod()
	critical.Spec.PriorityClassName = "system-node-critical"
	tests := []struct {
		name     string
		pod      *v1.Pod
		wantSame bool
	}{
		{name: "another replica", pod: plugintest.Pod("web-2", "", "200m", "256Mi"), wantSame: true},
		{name: "more cpu", pod: plugintest.Pod("web", "", "400m", "256Mi")},
		{name: "more memory", pod: plugintest.Pod("web", "", "200m", "512Mi")},
		{name: "DaemonSet pod (never filtered)", pod: daemon},
		{name: "critical pod (not filtered by default)", pod: critical},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fw.Signature(t, tt.pod) == base; got != tt.wantSame {
				t.Errorf("same signature as a 200m/256Mi pod: %v, want %v", got, tt.wantSame)
			}
		})
	}
}

// placementEvents: false records no event of a placement.
func TestPlacementEventsOff(t *testing.T) {
	off := false
	fw, _ := setup(t, &config.LoadAwareArgs{PlacementEvents: &off},
		map[string]plugintest.NodeStats{"cool": {CPU: 30, Memory: 40}, "hot": {CPU: 30, Memory: 95}}, "cool", "hot")
	ctx := context.Background()
	state := framework.NewCycleState()
	pod := newPod()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	// A node rejected for load: with the events on, this placement would
	// record one.
	if st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, "hot")); st.IsSuccess() {
		t.Fatal("the hot node passed")
	}
	if st := fw.RunReservePluginsReserve(ctx, state, pod, "cool"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	for _, e := range fw.Events() {
		if strings.Contains(e, ReasonPlaced) {
			t.Fatalf("placement event with placementEvents off: %q", e)
		}
	}
}

// A placement no node's load shaped records no event: explain says the same
// on asking, at no cost to scheduling.
func TestPlacementEventsOnlyWhenLoadMattered(t *testing.T) {
	fw, _ := setup(t, nil, map[string]plugintest.NodeStats{"cool": {CPU: 30, Memory: 40}, "warm": {CPU: 50, Memory: 50}}, "cool", "warm")
	ctx := context.Background()
	state := framework.NewCycleState()
	pod := newPod()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	for _, n := range []string{"cool", "warm"} {
		if st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, n)); !st.IsSuccess() {
			t.Fatalf("Filter %s: %v", n, st)
		}
	}
	if st := fw.RunReservePluginsReserve(ctx, state, pod, "cool"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	for _, e := range fw.Events() {
		if strings.Contains(e, ReasonPlaced) {
			t.Fatalf("placement event though no node was rejected for load: %q", e)
		}
	}
}

// Placement events are bounded in rate: a burst of placements while a node
// is hot records the first ones, not one per pod.
func TestPlacementEventsAreBoundedInRate(t *testing.T) {
	fw, _ := setup(t, nil, map[string]plugintest.NodeStats{"cool": {CPU: 30, Memory: 40}, "hot": {CPU: 30, Memory: 95}}, "cool", "hot")
	ctx := context.Background()
	const pods = 3 * placementEventBurst
	for i := range pods {
		state := framework.NewCycleState()
		pod := plugintest.Pod(fmt.Sprintf("web-%d", i), "", "200m", "256Mi")
		if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
			t.Fatalf("PreFilter: %v", st)
		}
		if st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, "hot")); st.IsSuccess() {
			t.Fatal("the hot node passed")
		}
		if st := fw.RunReservePluginsReserve(ctx, state, pod, "cool"); !st.IsSuccess() {
			t.Fatalf("Reserve: %v", st)
		}
	}
	placed := 0
	for _, e := range fw.Events() {
		if strings.Contains(e, ReasonPlaced) {
			placed++
		}
	}
	// The burst, and what the rate refills while the test runs.
	if placed < placementEventBurst || placed >= pods {
		t.Errorf("%d placement events for %d placements, want the burst of %d and a few more at most", placed, pods, placementEventBurst)
	}
}
