package agreement

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

// windowed are a node's cpu and memory means and newest samples, per
// window; a window not listed has the 5m window's figures.
type windowed map[usage.Window][4]float64 // cpu mean, cpu latest, memory mean, memory latest

// candidates are nodes each setting below makes the best for the pod, or
// not: small and cool, big and warm, a CPU that is idle on average but busy
// now and over the last minute, one with memory free and CPU busy, and a
// bigger one, moderately used.
var candidates = []struct {
	node  *v1.Node
	stats windowed
}{
	{plugintest.Node("small-cool", "2", "4Gi", 110), windowed{usage.Window5m: {20, 20, 30, 30}}},
	{plugintest.Node("big-warm", "8", "16Gi", 110), windowed{usage.Window5m: {40, 40, 40, 40}}},
	{plugintest.Node("cpu-spiky", "4", "8Gi", 110), windowed{usage.Window5m: {10, 70, 20, 20}, usage.Window1m: {75, 70, 20, 20}}},
	{plugintest.Node("memory-free", "4", "8Gi", 110), windowed{usage.Window5m: {50, 50, 5, 5}}},
	{plugintest.Node("bigger", "16", "32Gi", 110), windowed{usage.Window5m: {30, 30, 30, 30}}},
}

func candidateSnapshot(at time.Time) *usage.Snapshot {
	snap := &usage.Snapshot{Time: at, Source: "test", Nodes: map[string]usage.NodeUsage{}}
	for _, c := range candidates {
		w := map[usage.Window]map[usage.Resource]usage.Stats{}
		for _, win := range usage.DefaultWindows {
			f, ok := c.stats[win]
			if !ok {
				f = c.stats[usage.Window5m]
			}
			cpu := usage.Stats{Avg: f[0], Latest: f[1], P95: max(f[0], f[1]), Max: max(f[0], f[1]), Samples: 10}
			mem := usage.Stats{Avg: f[2], Latest: f[3], P95: max(f[2], f[3]), Max: max(f[2], f[3]), Samples: 10}
			w[win] = map[usage.Resource]usage.Stats{usage.CPU: cpu, usage.Memory: mem}
		}
		snap.Nodes[c.node.Name] = usage.NodeUsage{Node: c.node.Name, SampleTime: at, Windows: w}
	}
	return snap
}

// TestPredictedDestinationFollowsTheScheduler changes each setting of the
// scheduling model in the scheduler's configuration, as a user would in
// the chart's values, and checks that the node the descheduler predicts
// for a pod (its model read from that configuration, as the descheduler
// binary reads the file the chart mounts) is the node the scheduler's
// LoadAware, configured by the same file, prefers. Each setting must change
// the choice from the defaults', so a setting the descheduler did not
// receive would fail.
func TestPredictedDestinationFollowsTheScheduler(t *testing.T) {
	requests := plugintest.Pod("p", "", "500m", "512Mi")
	noRequests := plugintest.Pod("p", "", "", "")
	tests := []struct {
		name string
		args string // LoadAware's args, as the chart renders them
		pod  *v1.Pod
	}{
		{name: "defaults", args: `{}`, pod: requests},
		{name: "thresholds", args: `{thresholds: {cpu: 85, memory: 25}}`, pod: requests},
		{name: "thresholdStatistics", args: `{thresholdStatistics: {cpu: Latest}}`, pod: requests},
		{name: "combine and weights", args: `{scoringStrategy: {combine: WeightedMean, resources: [{name: cpu, weight: 1}, {name: memory, weight: 4}]}}`, pod: requests},
		{name: "strategy", args: `{scoringStrategy: {type: TargetPacking, targetUtilization: 60}}`, pod: requests},
		{name: "window", args: `{window: 1m}`, pod: requests},
		{name: "podEstimate requestMultiplier", args: `{podEstimate: {requestMultiplier: 4}}`, pod: requests},
		{name: "defaults, pod without requests", args: `{}`, pod: noRequests},
		{name: "podEstimate defaults", args: `{podEstimate: {defaultCPU: "2", defaultMemory: 4Gi}}`, pod: noRequests},
	}
	defaultChoice := map[*v1.Pod]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-scheduler
  pluginConfig:
  - name: LoadAware
    args: %s
`, tt.args)
			snap := candidateSnapshot(time.Now().Add(-10 * time.Second))
			scheduler := schedulerChoice(t, snap, tt.args, tt.pod)
			descheduler := predictedChoice(t, snap, cfg, tt.pod)
			t.Logf("the scheduler's choice %q, the descheduler's prediction %q", scheduler, descheduler)
			if scheduler != descheduler {
				t.Errorf("the scheduler places the pod on %q, the descheduler predicts %q", scheduler, descheduler)
			}
			if tt.args == `{}` {
				defaultChoice[tt.pod] = scheduler
				return
			}
			if d, ok := defaultChoice[tt.pod]; !ok {
				t.Fatalf("no default choice for the pod yet")
			} else if scheduler == d {
				t.Errorf("with %s the scheduler still prefers %q, as with the defaults: the case shows nothing", tt.args, d)
			}
		})
	}
}

// schedulerChoice runs LoadAware, decoded and defaulted from args as the
// scheduler does, over the candidates and returns the best node that passes
// its filter.
func schedulerChoice(t *testing.T, snap *usage.Snapshot, args string, pod *v1.Pod) string {
	t.Helper()
	la := &config.LoadAwareArgs{}
	if err := yaml.UnmarshalStrict([]byte(args), la); err != nil {
		t.Fatalf("LoadAware args %s: %v", args, err)
	}
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: snap}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return loadaware.New(ctx, la, h, tracker)
	}
	var nodes []*v1.Node
	for _, c := range candidates {
		nodes = append(nodes, c.node)
	}
	fw := plugintest.NewFramework(t, loadaware.Name, factory, []string{"PreFilter", "Filter", "PreScore", "Score"}, nodes, nil)
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	scores := fw.Scores(t, state, pod)
	best, bestScore := "", int64(-1)
	for _, c := range candidates {
		if st := fw.RunFilterPlugins(ctx, state, pod, fw.NodeInfo(t, c.node.Name)); !st.IsSuccess() {
			continue
		}
		if s := scores[c.node.Name]; s > bestScore {
			best, bestScore = c.node.Name, s
		} else if s == bestScore {
			t.Fatalf("%s and %s tie at %d: the case cannot tell the choice", best, c.node.Name, s)
		}
	}
	return best
}

// predictedChoice is the descheduler's prediction: its model of the
// scheduler read from cfg, the usage read as that model says, every node
// judged against the scheduler's thresholds.
func predictedChoice(t *testing.T, snap *usage.Snapshot, cfg string, pod *v1.Pod) string {
	t.Helper()
	settings, found, err := loadmodel.SchedulerSettings([]byte(cfg), "ballast-scheduler")
	if err != nil || !found {
		t.Fatalf("the scheduler's settings: found %v, %v", found, err)
	}
	model := balance.NewSchedulerModel(settings)
	var fits []string
	scores := map[string]int64{}
	for _, c := range candidates {
		load, ok := balance.ReadLoad(snap, c.node.Name, settings.UsageWindow(), settings.Statistics(), model.SchedulerThresholds())
		if !ok {
			t.Fatalf("no usage for %s", c.node.Name)
		}
		if p := model.Place(model.EstimatePod(pod), c.node, load, model.SchedulerThresholds()); p.Fits {
			fits = append(fits, c.node.Name)
			scores[c.node.Name] = p.Score
		}
	}
	slices.SortStableFunc(fits, func(a, b string) int { return int(scores[b] - scores[a]) })
	if len(fits) == 0 {
		return ""
	}
	return fits[0]
}
