package balance_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

func TestSchedulerModel(t *testing.T) {
	m := balance.SchedulerModel{}
	n := balancetest.Node("n") // 4 CPUs, 1000 MiB
	p := balancetest.Pod("p", "", "rs", 100)
	// 100m of 4000m = 2.5 %; 100 MiB of 1000 MiB = 10 %.
	if diff := cmp.Diff(balance.NodeLoad{usage.CPU: 2.5, usage.Memory: 10}, m.Share(m.EstimatePod(p), n), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("PodLoad (-want,+got):\n%s", diff)
	}
	high := balance.ResourceThresholds{usage.CPU: 80, usage.Memory: 85}
	fits := m.Place(m.EstimatePod(p), n, balance.NodeLoad{usage.CPU: 10, usage.Memory: 40}, high)
	// Least loaded: cpu 100 − 12.5, memory 100 − 50; the bottleneck, as
	// LoadAware's default: 50.
	if !fits.Fits || fits.Score != 50 {
		t.Errorf("Place on a cool node = %+v, want fits with score 50", fits)
	}
	// The weighted mean, when the scheduler is set to it: 68.75 → 69.
	mean := balance.NewSchedulerModel(loadmodel.Settings{ScoringStrategy: &loadmodel.ScoringStrategy{Combine: loadmodel.WeightedMean}})
	if got := mean.Place(m.EstimatePod(p), n, balance.NodeLoad{usage.CPU: 10, usage.Memory: 40}, high); !got.Fits || got.Score != 69 {
		t.Errorf("Place with the weighted mean = %+v, want fits with score 69", got)
	}
	tooHot := m.Place(m.EstimatePod(p), n, balance.NodeLoad{usage.CPU: 10, usage.Memory: 80}, high)
	if tooHot.Fits || !strings.Contains(tooHot.Reason, "memory") {
		t.Errorf("Place pushing memory to 90 %% = %+v, want a memory violation", tooHot)
	}
}
