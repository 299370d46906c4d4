package loadvariationriskbalancing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

func TestScore(t *testing.T) {
	// The pod asks for 400m of 4 CPUs (10 %) and 800Mi of 8000Mi (10 %).
	stats := map[string]plugintest.NodeStats{
		// cpu: mu = (30+10)/100 = 0.4, sigma = 0.1 → risk 0.25 → 75; memory the same → 75
		"steady": {CPU: 30, CPUStd: 10, Memory: 30, MemoryStd: 10},
		// cpu: mu = 0.3, sigma = 0.5 → risk 0.4 → 60; memory: mu = 0.3, sigma 0.5 → 60
		"swinging": {CPU: 20, CPUStd: 50, Memory: 20, MemoryStd: 50},
		"stale":    {CPU: 0, Memory: 0, Stale: true},
	}
	tests := []struct {
		name string
		args *config.LoadVariationRiskBalancingArgs
		want map[string]int64
	}{
		{name: "defaults", want: map[string]int64{"steady": 75, "swinging": 60, "stale": 50}},
		{
			// margin 0 ignores variation: steady (1 − 0.4/2) = 80, swinging (1 − 0.3/2) = 85
			name: "margin zero balances the mean only",
			args: &config.LoadVariationRiskBalancingArgs{SafeVarianceMargin: ptr.To(0.0)},
			want: map[string]int64{"steady": 80, "swinging": 85, "stale": 50},
		},
		{
			// sensitivity 2: steady sigma √0.1 = 0.316 → risk 0.358 → 64.2; swinging √0.5 = 0.707 → 0.504 → 49.6
			name: "sensitivity two",
			args: &config.LoadVariationRiskBalancingArgs{SafeVarianceSensitivity: ptr.To(2.0)},
			want: map[string]int64{"steady": 64, "swinging": 50, "stale": 50},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(time.Now(), stats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
			factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
				return New(ctx, tt.args, h, tracker)
			}
			var nodes []*v1.Node
			for _, n := range []string{"steady", "swinging", "stale"} {
				nodes = append(nodes, plugintest.Node(n, "4", "8000Mi", 110))
			}
			fw := plugintest.NewFramework(t, Name, factory, []string{"PreScore", "Score"}, nodes, nil)
			got := fw.Scores(t, framework.NewCycleState(), plugintest.Pod("p", "", "400m", "800Mi"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
			if ev := fw.Events(); len(ev) != 1 || !strings.Contains(ev[0], string(nodeload.CauseStale)) {
				t.Errorf("events = %q, want one %s event", ev, nodeload.CauseStale)
			}
		})
	}
}

func TestInvalidArgs(t *testing.T) {
	_, err := New(context.Background(), &config.LoadVariationRiskBalancingArgs{SafeVarianceSensitivity: ptr.To(-1.0)}, nil, nodeload.NewTracker(nil, nodeload.Options{}))
	if err == nil || !strings.Contains(err.Error(), "safeVarianceSensitivity") {
		t.Errorf("err = %v, want one naming safeVarianceSensitivity", err)
	}
}

func TestSignPod(t *testing.T) {
	tracker := nodeload.NewTracker(&plugintest.Source{}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return New(ctx, nil, h, tracker)
	}
	fw := plugintest.NewFramework(t, Name, factory, []string{"PreScore", "Score", "Reserve"}, []*v1.Node{plugintest.Node("n1", "4", "8Gi", 110)}, nil)
	base := fw.Signature(t, plugintest.Pod("a", "", "400m", "800Mi"))
	if fw.Signature(t, plugintest.Pod("b", "", "400m", "800Mi")) != base {
		t.Error("two pods with the same requests have different signatures")
	}
	if fw.Signature(t, plugintest.Pod("c", "", "400m", "1600Mi")) == base {
		t.Error("pods with different demands have the same signature")
	}
}
