package loadaware

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadvariationriskbalancing"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/podcountbalance"
)

// termStats are nodes of 4 CPUs and 8Gi for the score terms, with 0 and 10
// pods of 110 on them; the pod asks for 200m (5 %) and 256Mi (3.125 %).
var termStats = map[string]plugintest.NodeStats{
	"cool":  {CPU: 15, Memory: 16.875},
	"warm":  {CPU: 55, Memory: 36.875, CPUStd: 10, MemoryStd: 10},
	"stale": {CPU: 10, Memory: 10, Stale: true},
}

// termsFramework runs the plugin built by newPlugin at PreScore and Score
// over termStats, with 10 pods on warm.
func termsFramework(t *testing.T, name string, newPlugin func(context.Context, runtime.Object, fwk.Handle, *nodeload.Tracker) (fwk.Plugin, error)) *plugintest.Framework {
	t.Helper()
	tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(sampled, termStats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	var nodes []*v1.Node
	for _, n := range []string{"cool", "warm", "stale"} {
		nodes = append(nodes, plugintest.Node(n, "4", "8Gi", 110))
	}
	var pods []*v1.Pod
	for i := 0; i < 10; i++ {
		pods = append(pods, plugintest.Pod(fmt.Sprintf("old-%d", i), "warm", "", ""))
	}
	factory := func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return newPlugin(ctx, obj, h, tracker)
	}
	extensions := []string{"PreScore", "Score"}
	if name == podcountbalance.Name {
		extensions = []string{"Score"}
	}
	return plugintest.NewFramework(t, name, factory, extensions, nodes, pods)
}

func newLoadAware(args *config.LoadAwareArgs) func(context.Context, runtime.Object, fwk.Handle, *nodeload.Tracker) (fwk.Plugin, error) {
	return func(ctx context.Context, _ runtime.Object, h fwk.Handle, tr *nodeload.Tracker) (fwk.Plugin, error) {
		return New(ctx, args, h, tr)
	}
}

// shipped are the terms of the ballast-scheduler profile: predicted usage 5,
// risk 1, free pod slots 1.
func shipped() *config.LoadAwareArgs {
	return &config.LoadAwareArgs{
		Settings: loadmodel.Settings{
			ScoringStrategy: &config.ScoringStrategy{Weight: 5},
		},
		VariationRisk:   &config.VariationRiskTerm{},
		PodCountBalance: &config.PodCountBalanceTerm{},
	}
}

func TestScoreTerms(t *testing.T) {
	tests := []struct {
		name string
		args *config.LoadAwareArgs
		want map[string]int64
	}{
		{
			// The usage alone: cool min(100−20, 100−20) = 80, warm min(40, 60) = 40, stale neutral.
			name: "no terms",
			want: map[string]int64{"cool": 80, "warm": 40, "stale": 50},
		},
		{
			// usage as above; risk (15m): cool mu 0.2, sigma 0 → 90 on both;
			// warm cpu mu 0.6, sigma 0.1 → 65, memory mu 0.4 → 75: 70; stale 50;
			// free pod slots 110, 100, 110 → 100, 90.9, 100:
			// cool (5×80 + 90 + 100)/7 = 84.3, warm (5×40 + 70 + 90.9)/7 = 51.6,
			// stale (5×50 + 50 + 100)/7 = 57.1
			name: "usage 5, risk 1, pods 1",
			args: shipped(),
			want: map[string]int64{"cool": 84, "warm": 52, "stale": 57},
		},
		{
			// cool (80 + 100)/2 = 90, warm (40 + 90.9)/2 = 65.5, stale (50 + 100)/2 = 75
			name: "free pod slots alone",
			args: &config.LoadAwareArgs{PodCountBalance: &config.PodCountBalanceTerm{}},
			want: map[string]int64{"cool": 90, "warm": 65, "stale": 75},
		},
		{
			// margin 0: the risk is the mean's: cool 90, warm cpu 70, memory 80: 75;
			// cool (80 + 3×90)/4 = 87.5, warm (40 + 3×75)/4 = 66.25, stale 50
			name: "risk weighing 3, margin 0",
			args: &config.LoadAwareArgs{VariationRisk: &config.VariationRiskTerm{Weight: 3, SafeVarianceMargin: new(float64)}},
			want: map[string]int64{"cool": 88, "warm": 66, "stale": 50},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := termsFramework(t, Name, newLoadAware(tt.args))
			if diff := cmp.Diff(tt.want, fw.Scores(t, framework.NewCycleState(), newPod())); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// LoadAware with the shipped terms at weight 7 adds to a node's total what
// LoadAware at 5, LoadVariationRiskBalancing at 1 and PodCountBalance at 1
// added, but for rounding: each plugin rounded its own score before the
// framework weighed it, the terms are rounded once, as their sum.
func TestScoreTermsAddUpAsThePluginsDid(t *testing.T) {
	pod := newPod()
	scores := func(name string, newPlugin func(context.Context, runtime.Object, fwk.Handle, *nodeload.Tracker) (fwk.Plugin, error)) map[string]int64 {
		return termsFramework(t, name, newPlugin).Scores(t, framework.NewCycleState(), pod)
	}
	merged := scores(Name, newLoadAware(shipped()))
	usage := scores(Name, newLoadAware(nil))
	risk := scores(loadvariationriskbalancing.Name, func(ctx context.Context, _ runtime.Object, h fwk.Handle, tr *nodeload.Tracker) (fwk.Plugin, error) {
		return loadvariationriskbalancing.New(ctx, nil, h, tr)
	})
	pods := scores(podcountbalance.Name, func(ctx context.Context, obj runtime.Object, h fwk.Handle, _ *nodeload.Tracker) (fwk.Plugin, error) {
		return podcountbalance.New(ctx, obj, h)
	})
	for node, m := range merged {
		three := 5*usage[node] + risk[node] + pods[node]
		// 7 × round(x/7) is within 3.5 of x; the plugins' own roundings
		// within 5 × 0.5 + 0.5 + 1 (PodCountBalance truncates).
		if diff := math.Abs(float64(7*m - three)); diff > 3.5+4 {
			t.Errorf("%s: LoadAware with terms adds %d, the three plugins %d (5×%d + %d + %d)", node, 7*m, three, usage[node], risk[node], pods[node])
		}
	}
}
