package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/loadmodel"
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
// low thresholds and the cluster's mean plus the deviation.
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
		{"cool", "takes new pods", "cool: it may receive moved pods"},
		// Memory's mean is (95+55+20+75)/4 = 61.25: 75 is under its high
		// threshold and under the mean plus 20.
		{"ahead", "takes new pods", "neither hot nor cool"},
	} {
		nu := snap.Nodes[tc.node]
		if got := judgeForScheduler(settings, nu, true).Verdict; !strings.HasPrefix(got, tc.scheduler) {
			t.Errorf("%s, scheduler: %q, want %q", tc.node, got, tc.scheduler)
		}
		if got := judgeForDescheduler(high, low, dev, usage.Window5m, nil, nu, snap, true).Verdict; !strings.HasPrefix(got, tc.descheduler) {
			t.Errorf("%s, descheduler: %q, want %q", tc.node, got, tc.descheduler)
		}
	}
	// Under its high threshold but above the mean (20+55+20+80)/4 = 43.75
	// plus its deviation: hot for balance.
	snap.Nodes["ahead"] = nodeUsage(45, 80)
	snap.Nodes["hot"] = nodeUsage(40, 20)
	if got := judgeForDescheduler(high, low, dev, usage.Window5m, nil, snap.Nodes["ahead"], snap, true).Verdict; !strings.HasPrefix(got, "hot for balance: memory 80.0% > mean+deviation 63.8%") {
		t.Errorf("ahead of the mean: %q", got)
	}
	if got := judgeForScheduler(settings, nodeUsage(10, 10), false).Verdict; !strings.Contains(got, "requests") {
		t.Errorf("without usage: %q", got)
	}
}
