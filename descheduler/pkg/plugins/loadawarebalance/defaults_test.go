package loadawarebalance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func TestSetDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   *LoadAwareBalanceArgs
		want *LoadAwareBalanceArgs
	}{
		{
			name: "everything unset",
			in:   &LoadAwareBalanceArgs{},
			want: &LoadAwareBalanceArgs{
				HighThresholds:       balance.ResourceThresholds{usage.CPU: 80, usage.Memory: 85},
				LowThresholds:        balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 60},
				ConsecutiveHotCycles: ptrTo(int32(1)),
				PlanMargin:           ptrTo(2.0),
				SurgeSingleReplica:   ptrTo(false),
				EvictionArgs: balance.EvictionArgs{
					EvictionCooldown:         &metav1.Duration{Duration: 10 * time.Minute},
					BalanceCooldown:          &metav1.Duration{Duration: time.Hour},
					MaxEvictionsPerNode:      ptrTo(int32(5)),
					MaxEvictionsPerNamespace: ptrTo(int32(5)),
					MaxEvictionsPerCycle:     ptrTo(int32(5)),
					Window:                   &metav1.Duration{Duration: 5 * time.Minute},
					ThresholdStatistics:      loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.Latest},
					Namespaces:               &api.Namespaces{Exclude: []string{"kube-system"}},
					SchedulerNames:           []string{"ballast-scheduler"},
					MemoryGrowthPerMinute:    ptrTo(resource.MustParse("1Mi")),
				},
			},
		},
		{
			name: "set fields are kept",
			in: &LoadAwareBalanceArgs{
				HighThresholds:       balance.ResourceThresholds{usage.Memory: 90},
				LowThresholds:        balance.ResourceThresholds{usage.Memory: 40},
				ConsecutiveHotCycles: ptrTo(int32(1)),
				PlanMargin:           ptrTo(0.0),
				SurgeSingleReplica:   ptrTo(true),
				EvictionArgs: balance.EvictionArgs{
					EvictionCooldown:         &metav1.Duration{Duration: 2 * time.Hour},
					MaxEvictionsPerNode:      ptrTo(int32(7)),
					MaxEvictionsPerNamespace: ptrTo(int32(8)),
					MaxEvictionsPerCycle:     ptrTo(int32(9)),
					Window:                   &metav1.Duration{Duration: 15 * time.Minute},
					ThresholdStatistics:      loadmodel.Statistics{usage.Memory: loadmodel.P95},
					DryRun:                   true,
					Namespaces:               &api.Namespaces{Include: []string{"apps"}},
					SchedulerNames:           []string{"ballast-scheduler", "default-scheduler"},
				},
			},
			want: &LoadAwareBalanceArgs{
				HighThresholds:       balance.ResourceThresholds{usage.Memory: 90},
				LowThresholds:        balance.ResourceThresholds{usage.Memory: 40},
				ConsecutiveHotCycles: ptrTo(int32(1)),
				PlanMargin:           ptrTo(0.0),
				SurgeSingleReplica:   ptrTo(true),
				EvictionArgs: balance.EvictionArgs{
					// A resource the args do not name gets its default statistic.
					ThresholdStatistics: loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.P95},
					EvictionCooldown:    &metav1.Duration{Duration: 2 * time.Hour},
					// Never shorter than evictionCooldown.
					BalanceCooldown:          &metav1.Duration{Duration: 2 * time.Hour},
					MaxEvictionsPerNode:      ptrTo(int32(7)),
					MaxEvictionsPerNamespace: ptrTo(int32(8)),
					MaxEvictionsPerCycle:     ptrTo(int32(9)),
					Window:                   &metav1.Duration{Duration: 15 * time.Minute},
					DryRun:                   true,
					Namespaces:               &api.Namespaces{Include: []string{"apps"}},
					SchedulerNames:           []string{"ballast-scheduler", "default-scheduler"},
					MemoryGrowthPerMinute:    ptrTo(resource.MustParse("1Mi")),
				},
			},
		},
		{
			// Validation refuses it; defaulting must not hide it.
			name: "an empty scheduler list stays empty",
			in:   &LoadAwareBalanceArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{}}},
			want: func() *LoadAwareBalanceArgs {
				a := &LoadAwareBalanceArgs{}
				SetDefaults_LoadAwareBalanceArgs(a)
				a.SchedulerNames = []string{}
				return a
			}(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			SetDefaults_LoadAwareBalanceArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("defaulted args (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDefaultsDoNotShareMaps(t *testing.T) {
	a, b := &LoadAwareBalanceArgs{}, &LoadAwareBalanceArgs{}
	SetDefaults_LoadAwareBalanceArgs(a)
	SetDefaults_LoadAwareBalanceArgs(b)
	a.HighThresholds[usage.CPU] = 1
	if b.HighThresholds[usage.CPU] != 80 {
		t.Errorf("changing one instance's thresholds changed another's: %v", b.HighThresholds)
	}
	a.SchedulerNames[0] = "other"
	if b.SchedulerNames[0] != "ballast-scheduler" {
		t.Errorf("changing one instance's scheduler names changed another's: %v", b.SchedulerNames)
	}
}
