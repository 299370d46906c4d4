package spreadreplicas

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func TestSetDefaults(t *testing.T) {
	full := &SpreadReplicasArgs{
		HighThresholds: balance.ResourceThresholds{"cpu": 80, "memory": 85},
		EvictionArgs: balance.EvictionArgs{
			EvictionCooldown:         &metav1.Duration{Duration: 10 * time.Minute},
			BalanceCooldown:          &metav1.Duration{Duration: time.Hour},
			MaxEvictionsPerNode:      ptrTo(int32(5)),
			MaxEvictionsPerNamespace: ptrTo(int32(5)),
			MaxEvictionsPerCycle:     ptrTo(int32(5)),
			Window:                   &metav1.Duration{Duration: 5 * time.Minute},
			ThresholdStatistics:      loadmodel.Statistics{"cpu": loadmodel.Average, "memory": loadmodel.Latest},
			Namespaces:               &api.Namespaces{Exclude: []string{"kube-system"}},
			SchedulerNames:           []string{"ballast-scheduler"},
			MemoryGrowthPerMinute:    ptrTo(resource.MustParse("1Mi")),
		},
	}
	custom := &SpreadReplicasArgs{
		HighThresholds: balance.ResourceThresholds{"memory": 70},
		EvictionArgs: balance.EvictionArgs{
			EvictionCooldown:         &metav1.Duration{Duration: time.Minute},
			BalanceCooldown:          &metav1.Duration{Duration: 30 * time.Minute},
			MaxEvictionsPerNode:      ptrTo(int32(1)),
			MaxEvictionsPerNamespace: ptrTo(int32(1)),
			MaxEvictionsPerCycle:     ptrTo(int32(1)),
			Window:                   &metav1.Duration{Duration: time.Minute},
			ThresholdStatistics:      loadmodel.Statistics{"cpu": loadmodel.P95, "memory": loadmodel.Average},
			Namespaces:               &api.Namespaces{Include: []string{"apps"}},
			SchedulerNames:           []string{"ballast-scheduler", "default-scheduler"},
			MemoryGrowthPerMinute:    ptrTo(resource.MustParse("0")),
		},
	}
	for _, tc := range []struct {
		name     string
		in, want *SpreadReplicasArgs
	}{
		{name: "empty gets every default", in: &SpreadReplicasArgs{}, want: full},
		{name: "set fields are kept", in: custom.DeepCopy(), want: custom},
		// Validation refuses it; defaulting must not hide it.
		{name: "an empty scheduler list stays empty", in: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{}}},
			want: func() *SpreadReplicasArgs { a := full.DeepCopy(); a.SchedulerNames = []string{}; return a }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			SetDefaults_SpreadReplicasArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("defaulted args (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSchemeAppliesDefaults(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	a := &SpreadReplicasArgs{}
	scheme.Default(a)
	if a.MaxEvictionsPerNode == nil || *a.MaxEvictionsPerNode != 5 {
		t.Errorf("scheme defaulting left maxEvictionsPerNode = %v, want 5", a.MaxEvictionsPerNode)
	}
}
