package spreadreplicas

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func TestDeepCopy(t *testing.T) {
	full := func() *SpreadReplicasArgs {
		return &SpreadReplicasArgs{
			HighThresholds: balance.ResourceThresholds{"cpu": 80},
			EvictionArgs: balance.EvictionArgs{
				EvictionCooldown:         &metav1.Duration{Duration: time.Minute},
				MaxEvictionsPerNode:      ptrTo(int32(1)),
				MaxEvictionsPerNamespace: ptrTo(int32(2)),
				MaxEvictionsPerCycle:     ptrTo(int32(3)),
				Window:                   &metav1.Duration{Duration: time.Minute},
				DryRun:                   true,
				Namespaces:               &api.Namespaces{Exclude: []string{"kube-system"}},
				SchedulerNames:           []string{"ballast-scheduler"},
			},
		}
	}
	// scribble changes everything a copy could share with its original.
	scribble := func(a *SpreadReplicasArgs) {
		a.HighThresholds["cpu"] = 1
		a.EvictionCooldown.Duration = time.Hour
		*a.MaxEvictionsPerNode, *a.MaxEvictionsPerNamespace, *a.MaxEvictionsPerCycle = 9, 9, 9
		a.Window.Duration = time.Hour
		a.Namespaces.Exclude[0] = "other"
		a.SchedulerNames[0] = "other"
	}
	for _, tc := range []struct {
		name     string
		in       func() *SpreadReplicasArgs
		scribble func(*SpreadReplicasArgs)
	}{
		{name: "every field set", in: full, scribble: scribble},
		{name: "nothing set", in: func() *SpreadReplicasArgs { return &SpreadReplicasArgs{} }},
		// An empty list is not unset: defaulting must not turn it into the
		// default, so the copy validation works on must keep it empty.
		{name: "empty scheduler names stay empty", in: func() *SpreadReplicasArgs {
			return &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in()
			out := in.DeepCopy()
			if diff := cmp.Diff(tc.in(), out); diff != "" {
				t.Fatalf("copy differs (-want,+copy):\n%s", diff)
			}
			if tc.scribble == nil {
				return
			}
			tc.scribble(out)
			if diff := cmp.Diff(tc.in(), in); diff != "" {
				t.Errorf("changing the copy changed the original (-want,+got):\n%s", diff)
			}
		})
	}
}
