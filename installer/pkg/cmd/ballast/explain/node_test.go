package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func nodeUsage(cpuAvg, memLatest float64) usage.NodeUsage {
	return usage.NodeUsage{Windows: map[usage.Window]map[usage.Resource]usage.Stats{
		usage.Window5m: {
			usage.CPU:    {Avg: cpuAvg, Latest: cpuAvg + 30, Samples: 20},
			usage.Memory: {Avg: memLatest - 20, Latest: memLatest, Samples: 20},
		},
	}}
}

// The scheduler judges CPU on the window's mean and memory on the newest
// sample, against its thresholds; the descheduler against its high and
// low thresholds; below them, balance is the plan's.
func TestJudgements(t *testing.T) {
	settings := loadmodel.DefaultSettings()
	snap := &usage.Snapshot{Time: time.Now(), Nodes: map[string]usage.NodeUsage{
		"hot": nodeUsage(40, 95), "warm": nodeUsage(55, 55), "cool": nodeUsage(10, 20), "ahead": nodeUsage(45, 75),
	}}
	high := balance.ResourceThresholds{usage.CPU: 80, usage.Memory: 85}
	low := balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 60}
	dev := balance.ResourceThresholds{usage.CPU: 20, usage.Memory: 20}
	for _, tc := range []struct {
		node, scheduler, descheduler string
	}{
		{"hot", "gets no new pod: memory 95.0% > 90%", "hot: memory 95.0% > 85%"},
		{"warm", "takes new pods", "neither hot nor cool"},
		{"cool", "takes new pods", "cool: it may receive pods moved off hot nodes; below its high thresholds the plan balances it"},
		// Far above the others, under its high thresholds: the plan's.
		{"ahead", "takes new pods", "neither hot nor cool"},
	} {
		nu := snap.Nodes[tc.node]
		if got := judgeForScheduler(settings, nu, true).Verdict; !strings.HasPrefix(got, tc.scheduler) {
			t.Errorf("%s, scheduler: %q, want %q", tc.node, got, tc.scheduler)
		}
		if got := judgeForDescheduler(high, low, dev, usage.Window5m, nil, nu, true).Verdict; !strings.HasPrefix(got, tc.descheduler) {
			t.Errorf("%s, descheduler: %q, want %q", tc.node, got, tc.descheduler)
		}
	}
	j := judgeForDescheduler(high, low, dev, usage.Window5m, nil, snap.Nodes["ahead"], true)
	if len(j.Resources) != 2 || !j.Resources[0].Balanced || !j.Resources[1].Balanced {
		t.Errorf("ahead: resources %+v, want both balanced by plan", j.Resources)
	}
	if j := judgeForDescheduler(high, low, nil, usage.Window5m, nil, snap.Nodes["cool"], true); j.Verdict != "cool: it may receive pods moved off hot nodes" || j.Resources[0].Balanced {
		t.Errorf("without deviationThresholds: %+v", j)
	}
	if got := judgeForScheduler(settings, nodeUsage(10, 10), false).Verdict; !strings.Contains(got, "requests") {
		t.Errorf("without usage: %q", got)
	}
}

// explain node shows the descheduler's plan as it concerns the node: its
// target there and the moves left off or onto it, not the others'.
func TestNodePlan(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	web := moves.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	api := moves.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "api"}
	plan := &moves.Rebalance{ID: "p1", Made: t0, Checked: t0.Add(time.Minute), Now: 31.5, NowBest: 8.25, Done: 1,
		Target: []moves.Placed{{Node: "a", Workload: web, Pods: 2}, {Node: "b", Workload: web, Pods: 3}, {Node: "a", Workload: api, Pods: 1}},
		Moves:  []moves.Step{{Workload: web, From: "b", To: "a"}, {Workload: api, From: "b", To: "c"}}}
	got := nodePlan(plan, "a")
	if len(got.Target) != 2 || len(got.Moves) != 1 || got.Moves[0].From != "b" || got.Spread != 31.5 || got.Best != 8.25 {
		t.Fatalf("nodePlan(a) = %+v", got)
	}
	var b strings.Builder
	printPlan(&b, got, t0.Add(2*time.Minute))
	for _, want := range []string{"plan p1 (1 moves made, 1 left here)", "spread 31.5 points, the best placement found 8.2",
		"target: 2 pods of default/ReplicaSet/web here", "next: a pod of default/ReplicaSet/web off b, onto a"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printed plan lacks %q:\n%s", want, b.String())
		}
	}
	if nodePlan(nil, "a") != nil {
		t.Error("a plan for no plan")
	}
}
