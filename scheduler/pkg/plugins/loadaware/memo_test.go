package loadaware

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

// Score gives every node Filter let through the score it gives when it
// works the node out itself, whatever the terms and whichever figures
// Filter and Score read; and it does read Filter's terms.
func TestScoreFromFilterIsScoreWorkedOut(t *testing.T) {
	stats := map[string]plugintest.NodeStats{
		"cool":  {CPU: 15, Memory: 17, CPUStd: 2, MemoryStd: 1, MemoryP95: 30},
		"warm":  {CPU: 55, Memory: 37, CPUStd: 10, MemoryStd: 10, CPUP95: 70},
		"spiky": {CPU: 40, Memory: 60, CPUStd: 25, MemoryStd: 3, CPUP95: 78, MemoryP95: 75},
		"hot":   {CPU: 30, Memory: 92},
		"busy":  {CPU: 88, Memory: 20},
		"stale": {CPU: 10, Memory: 10, Stale: true},
	}
	cpuOnly := shipped()
	cpuOnly.Thresholds = map[usage.Resource]float64{usage.CPU: 85}
	p95 := shipped()
	p95.ThresholdStatistics = map[usage.Resource]loadmodel.Statistic{usage.CPU: loadmodel.P95, usage.Memory: loadmodel.P95}
	packing := shipped()
	packing.ScoringStrategy.Type = config.TargetPacking
	packing.ScoringStrategy.Combine = config.WeightedMean
	for _, tt := range []struct {
		name string
		args *config.LoadAwareArgs
		// scoresChecks is whether Filter's predictions serve Score.
		scoresChecks bool
	}{
		{name: "usage alone", scoresChecks: true},
		{name: "shipped terms", args: shipped(), scoresChecks: true},
		{name: "p95 on both", args: p95, scoresChecks: true},
		{name: "target packing, weighted mean", args: packing, scoresChecks: true},
		// Filter checks cpu alone; Score predicts memory too.
		{name: "threshold on cpu only", args: cpuOnly, scoresChecks: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fw, pl := memoFramework(t, tt.args, stats)
			if pl.scoresChecks != tt.scoresChecks {
				t.Errorf("scoresChecks = %v, want %v", pl.scoresChecks, tt.scoresChecks)
			}
			ctx, pod := context.Background(), newPod()

			filtered := framework.NewCycleState()
			if _, st, _ := fw.RunPreFilterPlugins(ctx, filtered, pod); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			var passed []fwk.NodeInfo
			for _, n := range fw.Nodes {
				if fw.RunFilterPlugins(ctx, filtered, pod, n).IsSuccess() {
					passed = append(passed, n)
				}
			}
			if len(passed) == len(fw.Nodes) || len(passed) == 0 {
				t.Fatalf("%d of %d nodes passed: the test wants some rejected", len(passed), len(fw.Nodes))
			}
			s, ok := pl.readState(filtered)
			if !ok || s.memo.slots == nil {
				t.Fatal("PreFilter gave the cycle no memo")
			}
			for _, n := range passed {
				if _, _, ok := s.memo.recall(s.Table.Pos(n)); !ok {
					t.Errorf("Filter kept no terms of %s, which it let through", n.Node().Name)
				}
			}
			fromFilter := fw.ScoresOn(t, filtered, pod, passed)

			// The same cycle's figures, worked out by Score: a state
			// without Filter's memo.
			workedOut := framework.NewCycleState()
			workedOut.Write(fwk.StateKey(Name), &cycle{Cycle: s.Cycle, risk: s.risk})
			if diff := cmp.Diff(fw.ScoresOn(t, workedOut, pod, passed), fromFilter); diff != "" {
				t.Errorf("scores from Filter's terms (-worked out,+from Filter):\n%s", diff)
			}
		})
	}
}

// Terms kept in one cycle are not read in the next.
func TestMemoIsOneCycles(t *testing.T) {
	var ms memos
	first := ms.next(3)
	first.slots[1] = memoSlot{cycle: first.cycle, usage: 80, risk: 70}
	if u, r, ok := first.recall(1); !ok || u != 80 || r != 70 {
		t.Fatalf("recall(1) in its cycle = %v, %v, %v", u, r, ok)
	}
	second := ms.next(3)
	for i := -1; i <= 3; i++ {
		if _, _, ok := second.recall(i); ok {
			t.Errorf("the next cycle recalls slot %d", i)
		}
	}
	var none memo
	if _, _, ok := none.recall(0); ok {
		t.Error("a cycle without memo recalls")
	}
}

// memoFramework is setupPlugin over stats' nodes, with two pods bound to
// each node since its sample.
func memoFramework(t *testing.T, args *config.LoadAwareArgs, stats map[string]plugintest.NodeStats) (*plugintest.Framework, *LoadAware) {
	t.Helper()
	names := slices.Collect(maps.Keys(stats))
	fw, tracker, pl := setupPlugin(t, args, stats, names...)
	for _, name := range names {
		for i := range 2 {
			tracker.Reserve(context.Background(), plugintest.Pod(fmt.Sprintf("%s-%d", name, i), "", "300m", "512Mi"), name)
		}
	}
	return fw, pl
}
