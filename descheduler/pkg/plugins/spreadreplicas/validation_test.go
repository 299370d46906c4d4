package spreadreplicas

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func TestValidateSpreadReplicasArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args *SpreadReplicasArgs
		want field.ErrorList
	}{
		{name: "empty args are valid after defaulting", args: &SpreadReplicasArgs{}},
		{name: "bad thresholds", args: &SpreadReplicasArgs{HighThresholds: balance.ResourceThresholds{"cpu": 0, "gpu": 50}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("highThresholds").Key("cpu"), nil, ""),
				field.NotSupported[string](field.NewPath("highThresholds").Key("gpu"), nil, nil),
			}},
		{name: "negative cooldown", args: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{EvictionCooldown: &metav1.Duration{Duration: -time.Minute}}},
			want: field.ErrorList{field.Invalid(field.NewPath("evictionCooldown"), nil, "")}},
		{name: "limits below one", args: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{MaxEvictionsPerNode: ptrTo(int32(0)), MaxEvictionsPerNamespace: ptrTo(int32(-1)), MaxEvictionsPerCycle: ptrTo(int32(0))}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("maxEvictionsPerCycle"), nil, ""),
				field.Invalid(field.NewPath("maxEvictionsPerNamespace"), nil, ""),
				field.Invalid(field.NewPath("maxEvictionsPerNode"), nil, ""),
			}},
		{name: "zero window", args: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{Window: &metav1.Duration{}}},
			want: field.ErrorList{field.Invalid(field.NewPath("window"), nil, "")}},
		{name: "include and exclude", args: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{Namespaces: &api.Namespaces{Include: []string{"a"}, Exclude: []string{"b"}}}},
			want: field.ErrorList{field.Invalid(field.NewPath("namespaces"), nil, "")}},
		{name: "empty scheduler names", args: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{}}},
			want: field.ErrorList{field.Required(field.NewPath("schedulerNames"), "")}},
		{name: "repeated scheduler name", args: &SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{"ballast-scheduler", "ballast-scheduler"}}},
			want: field.ErrorList{field.Duplicate(field.NewPath("schedulerNames").Index(1), nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateSpreadReplicasArgs(tc.args)
			var got field.ErrorList
			if err != nil {
				var agg utilerrors.Aggregate
				if !errors.As(err, &agg) {
					t.Fatalf("error %v is not an aggregate", err)
				}
				for _, e := range agg.Errors() {
					got = append(got, e.(*field.Error))
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}
