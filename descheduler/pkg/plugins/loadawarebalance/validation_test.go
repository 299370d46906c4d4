package loadawarebalance

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func TestValidateLoadAwareBalanceArgs(t *testing.T) {
	tests := []struct {
		name string
		args *LoadAwareBalanceArgs
		want field.ErrorList
	}{
		{name: "empty args are valid once defaulted", args: &LoadAwareBalanceArgs{}},
		{
			name: "threshold above 100",
			args: &LoadAwareBalanceArgs{HighThresholds: balance.ResourceThresholds{usage.CPU: 120, usage.Memory: 85}},
			want: field.ErrorList{field.Invalid(field.NewPath("highThresholds").Key("cpu"), nil, "")},
		},
		{
			name: "unknown resource",
			args: &LoadAwareBalanceArgs{LowThresholds: balance.ResourceThresholds{"gpu": 10}},
			want: field.ErrorList{field.NotSupported[string](field.NewPath("lowThresholds").Key("gpu"), nil, nil)},
		},
		{
			name: "deviation out of range",
			args: &LoadAwareBalanceArgs{DeviationThresholds: balance.ResourceThresholds{usage.CPU: 0, usage.Memory: 120}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("deviationThresholds").Key("cpu"), nil, ""),
				field.Invalid(field.NewPath("deviationThresholds").Key("memory"), nil, ""),
			},
		},
		{
			name: "empty high thresholds",
			args: &LoadAwareBalanceArgs{HighThresholds: balance.ResourceThresholds{}},
			want: field.ErrorList{field.Required(field.NewPath("highThresholds"), "")},
		},
		{
			name: "low not below high, against the default high",
			args: &LoadAwareBalanceArgs{LowThresholds: balance.ResourceThresholds{usage.Memory: 85}},
			want: field.ErrorList{field.Invalid(field.NewPath("lowThresholds").Key("memory"), nil, "")},
		},
		{
			name: "negative and zero numbers",
			args: &LoadAwareBalanceArgs{
				ConsecutiveHotCycles: ptrTo(int32(0)),
				PlanMargin:           ptrTo(-0.5),
				EvictionArgs: balance.EvictionArgs{
					EvictionCooldown:         &metav1.Duration{Duration: -time.Second},
					MaxEvictionsPerNode:      ptrTo(int32(0)),
					MaxEvictionsPerNamespace: ptrTo(int32(-1)),
					MaxEvictionsPerCycle:     ptrTo(int32(0)),
					Window:                   &metav1.Duration{},
				},
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("consecutiveHotCycles"), nil, ""),
				field.Invalid(field.NewPath("evictionCooldown"), nil, ""),
				field.Invalid(field.NewPath("maxEvictionsPerCycle"), nil, ""),
				field.Invalid(field.NewPath("maxEvictionsPerNamespace"), nil, ""),
				field.Invalid(field.NewPath("maxEvictionsPerNode"), nil, ""),
				field.Invalid(field.NewPath("planMargin"), nil, ""),
				field.Invalid(field.NewPath("window"), nil, ""),
			},
		},
		{
			name: "a plan margin beyond any spread",
			args: &LoadAwareBalanceArgs{PlanMargin: ptrTo(101.0)},
			want: field.ErrorList{field.Invalid(field.NewPath("planMargin"), nil, "")},
		},
		{
			name: "a plan margin that is not a number",
			args: &LoadAwareBalanceArgs{PlanMargin: ptrTo(math.NaN())},
			want: field.ErrorList{field.Invalid(field.NewPath("planMargin"), nil, "")},
		},
		{
			name: "balance cooldown shorter than the eviction cooldown",
			args: &LoadAwareBalanceArgs{EvictionArgs: balance.EvictionArgs{
				EvictionCooldown: &metav1.Duration{Duration: time.Hour},
				BalanceCooldown:  &metav1.Duration{Duration: 30 * time.Minute},
			}},
			want: field.ErrorList{field.Invalid(field.NewPath("balanceCooldown"), nil, "")},
		},
		{
			name: "include and exclude namespaces together",
			args: &LoadAwareBalanceArgs{EvictionArgs: balance.EvictionArgs{Namespaces: &api.Namespaces{Include: []string{"a"}, Exclude: []string{"b"}}}},
			want: field.ErrorList{field.Invalid(field.NewPath("namespaces"), nil, "")},
		},
		{
			// Empty is not "every scheduler": that would move pods nothing
			// places by real usage again.
			name: "empty scheduler names",
			args: &LoadAwareBalanceArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{}}},
			want: field.ErrorList{field.Required(field.NewPath("schedulerNames"), "")},
		},
		{
			name: "blank and repeated scheduler names",
			args: &LoadAwareBalanceArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: []string{"ballast-scheduler", "", "ballast-scheduler"}}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("schedulerNames").Index(1), nil, ""),
				field.Duplicate(field.NewPath("schedulerNames").Index(2), nil),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.args.DeepCopy()
			SetDefaults_LoadAwareBalanceArgs(a)
			got := validateArgs(nil, a)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
			err := ValidateLoadAwareBalanceArgs(tc.args)
			if (err != nil) != (len(tc.want) > 0) {
				t.Errorf("ValidateLoadAwareBalanceArgs() = %v, want an error: %v", err, len(tc.want) > 0)
			}
		})
	}
}

func TestNewRejectsInvalidArgs(t *testing.T) {
	_, err := New(t.Context(), &LoadAwareBalanceArgs{ConsecutiveHotCycles: ptrTo(int32(0))}, nil, balance.Deps{})
	if err == nil {
		t.Fatal("New accepted consecutiveHotCycles: 0")
	}
	if want := "consecutiveHotCycles"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}
