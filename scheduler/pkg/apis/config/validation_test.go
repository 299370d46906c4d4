package config

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/usage"
)

// errorList unpacks the aggregate a validator returns.
func errorList(t *testing.T, err error) field.ErrorList {
	t.Helper()
	if err == nil {
		return nil
	}
	agg, ok := err.(utilerrors.Aggregate)
	if !ok {
		t.Fatalf("validator returned %T, want an aggregate of field errors", err)
	}
	var out field.ErrorList
	for _, e := range agg.Errors() {
		fe, ok := e.(*field.Error)
		if !ok {
			t.Fatalf("validator returned %T in its aggregate, want *field.Error", e)
		}
		out = append(out, fe)
	}
	return out
}

var ignoreWording = cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")

func TestValidateLoadAwareArgs(t *testing.T) {
	valid := func(mutate func(*LoadAwareArgs)) *LoadAwareArgs {
		a := &LoadAwareArgs{}
		SetDefaults_LoadAwareArgs(a)
		mutate(a)
		return a
	}
	tests := []struct {
		name string
		args *LoadAwareArgs
		want field.ErrorList
	}{
		{name: "defaults are valid", args: valid(func(*LoadAwareArgs) {})},
		{
			name: "threshold above 100",
			args: valid(func(a *LoadAwareArgs) { a.Thresholds[usage.CPU] = 120 }),
			want: field.ErrorList{field.Invalid(field.NewPath("thresholds").Key("cpu"), nil, "")},
		},
		{
			// A threshold of 0 would filter every node and so every pod.
			name: "threshold of 0",
			args: valid(func(a *LoadAwareArgs) { a.Thresholds[usage.Memory] = 0 }),
			want: field.ErrorList{field.Invalid(field.NewPath("thresholds").Key("memory"), nil, "")},
		},
		{
			name: "negative and NaN thresholds",
			args: valid(func(a *LoadAwareArgs) { a.Thresholds[usage.CPU] = -1; a.Thresholds[usage.Memory] = math.NaN() }),
			want: field.ErrorList{
				field.Invalid(field.NewPath("thresholds").Key("cpu"), nil, ""),
				field.Invalid(field.NewPath("thresholds").Key("memory"), nil, ""),
			},
		},
		{
			name: "unknown threshold resource",
			args: valid(func(a *LoadAwareArgs) { a.Thresholds["gpu"] = 50 }),
			want: field.ErrorList{field.NotSupported[string](field.NewPath("thresholds"), nil, nil)},
		},
		{
			name: "unknown statistic and resource",
			args: valid(func(a *LoadAwareArgs) {
				a.ThresholdStatistics[usage.Memory] = "Median"
				a.ThresholdStatistics["gpu"] = Latest
			}),
			want: field.ErrorList{
				field.NotSupported[string](field.NewPath("thresholdStatistics"), nil, nil),
				field.NotSupported[string](field.NewPath("thresholdStatistics").Key("memory"), nil, nil),
			},
		},
		{
			name: "unknown strategy",
			args: valid(func(a *LoadAwareArgs) { a.ScoringStrategy.Type = "MostLoaded" }),
			want: field.ErrorList{field.NotSupported[string](field.NewPath("scoringStrategy", "type"), nil, nil)},
		},
		{
			name: "negative weight, duplicate and unknown resource",
			args: valid(func(a *LoadAwareArgs) {
				a.ScoringStrategy.Resources = []ResourceSpec{{Name: usage.CPU, Weight: -1}, {Name: usage.CPU, Weight: 1}, {Name: "disk", Weight: 1}}
			}),
			want: field.ErrorList{
				field.Invalid(field.NewPath("scoringStrategy", "resources").Index(0).Child("weight"), nil, ""),
				field.Duplicate(field.NewPath("scoringStrategy", "resources").Index(1).Child("name"), nil),
				field.NotSupported[string](field.NewPath("scoringStrategy", "resources").Index(2).Child("name"), nil, nil),
			},
		},
		{
			name: "unknown combination",
			args: valid(func(a *LoadAwareArgs) { a.ScoringStrategy.Combine = "Average" }),
			want: field.ErrorList{field.NotSupported[string](field.NewPath("scoringStrategy", "combine"), nil, nil)},
		},
		{
			name: "unequal weights under the bottleneck",
			args: valid(func(a *LoadAwareArgs) {
				a.ScoringStrategy.Resources = []ResourceSpec{{Name: usage.CPU, Weight: 2}, {Name: usage.Memory, Weight: 1}}
			}),
			want: field.ErrorList{field.Invalid(field.NewPath("scoringStrategy", "resources").Index(1).Child("weight"), nil, "")},
		},
		{
			name: "unequal weights under the weighted mean",
			args: valid(func(a *LoadAwareArgs) {
				a.ScoringStrategy.Combine = WeightedMean
				a.ScoringStrategy.Resources = []ResourceSpec{{Name: usage.CPU, Weight: 2}, {Name: usage.Memory, Weight: 1}}
			}),
		},
		{
			name: "target utilisation out of range",
			args: valid(func(a *LoadAwareArgs) { a.ScoringStrategy.TargetUtilization = ptr.To(0.0) }),
			want: field.ErrorList{field.Invalid(field.NewPath("scoringStrategy", "targetUtilization"), nil, "")},
		},
		{
			name: "zero window and bad estimate, all reported at once",
			args: valid(func(a *LoadAwareArgs) {
				a.Window = &metav1.Duration{}
				a.PodEstimate.RequestMultiplier = ptr.To(0.0)
				a.PodEstimate.DefaultMemory = ptr.To(resource.MustParse("-1Mi"))
			}),
			want: field.ErrorList{
				field.Invalid(field.NewPath("window"), nil, ""),
				field.Invalid(field.NewPath("podEstimate", "requestMultiplier"), nil, ""),
				field.Invalid(field.NewPath("podEstimate", "defaultMemory"), nil, ""),
			},
		},
		{
			name: "score terms with their defaults are valid",
			args: valid(func(a *LoadAwareArgs) {
				a.VariationRisk, a.PodCountBalance = &VariationRiskTerm{}, &PodCountBalanceTerm{}
				SetDefaults_LoadAwareArgs(a)
			}),
		},
		{
			name: "score term weights out of range, and the risk's settings checked as LoadVariationRiskBalancing's",
			args: valid(func(a *LoadAwareArgs) {
				a.VariationRisk, a.PodCountBalance = &VariationRiskTerm{SafeVarianceSensitivity: ptr.To(0.0)}, &PodCountBalanceTerm{}
				SetDefaults_LoadAwareArgs(a)
				a.ScoringStrategy.Weight = 101
				a.VariationRisk.Weight = -1
				a.VariationRisk.Resources[1].Weight = 0
				a.PodCountBalance.Weight = 200
			}),
			want: field.ErrorList{
				field.Invalid(field.NewPath("scoringStrategy", "weight"), nil, ""),
				field.Invalid(field.NewPath("variationRisk", "weight"), nil, ""),
				field.Invalid(field.NewPath("variationRisk", "safeVarianceSensitivity"), nil, ""),
				field.Invalid(field.NewPath("variationRisk", "resources").Index(1).Child("weight"), nil, ""),
				field.Invalid(field.NewPath("podCountBalance", "weight"), nil, ""),
			},
		},
		{
			name: "planned moves from a named ConfigMap",
			args: valid(func(a *LoadAwareArgs) {
				a.PlannedMoves = &PlannedMoves{Namespace: "ballast", Name: "ballast-descheduler-moves"}
				SetDefaults_LoadAwareArgs(a)
			}),
		},
		{
			name: "planned moves without a ConfigMap",
			args: valid(func(a *LoadAwareArgs) { a.PlannedMoves = &PlannedMoves{} }),
			want: field.ErrorList{
				field.Required(field.NewPath("plannedMoves", "namespace"), ""),
				field.Required(field.NewPath("plannedMoves", "name"), ""),
			},
		},
		{
			// validFor 0 would favour nothing, 2h a cluster long gone.
			name: "planned moves with invalid names and validity",
			args: valid(func(a *LoadAwareArgs) {
				a.PlannedMoves = &PlannedMoves{Namespace: "Ballast", Name: "moves_", ValidFor: &metav1.Duration{Duration: 2 * time.Hour}}
			}),
			want: field.ErrorList{
				field.Invalid(field.NewPath("plannedMoves", "namespace"), nil, ""),
				field.Invalid(field.NewPath("plannedMoves", "name"), nil, ""),
				field.Invalid(field.NewPath("plannedMoves", "validFor"), nil, ""),
			},
		},
		{
			name: "planned moves valid for nothing",
			args: valid(func(a *LoadAwareArgs) {
				a.PlannedMoves = &PlannedMoves{Namespace: "ballast", Name: "moves", ValidFor: &metav1.Duration{}}
			}),
			want: field.ErrorList{field.Invalid(field.NewPath("plannedMoves", "validFor"), nil, "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorList(t, ValidateLoadAwareArgs(nil, tt.args))
			if diff := cmp.Diff(tt.want, got, ignoreWording); diff != "" {
				t.Errorf("errors mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateLoadVariationRiskBalancingArgs(t *testing.T) {
	tests := []struct {
		name string
		args *LoadVariationRiskBalancingArgs
		want field.ErrorList
	}{
		{name: "defaults are valid", args: &LoadVariationRiskBalancingArgs{}},
		{
			name: "negative margin, zero sensitivity, no window",
			args: &LoadVariationRiskBalancingArgs{
				SafeVarianceMargin:      ptr.To(-1.0),
				SafeVarianceSensitivity: ptr.To(0.0),
				Window:                  &metav1.Duration{Duration: -time.Second},
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("safeVarianceMargin"), nil, ""),
				field.Invalid(field.NewPath("safeVarianceSensitivity"), nil, ""),
				field.Invalid(field.NewPath("window"), nil, ""),
			},
		},
		{
			name: "weight above 100",
			args: &LoadVariationRiskBalancingArgs{Resources: []ResourceSpec{{Name: usage.Memory, Weight: 101}}},
			want: field.ErrorList{field.Invalid(field.NewPath("resources").Index(0).Child("weight"), nil, "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			SetDefaults_LoadVariationRiskBalancingArgs(tt.args)
			got := errorList(t, ValidateLoadVariationRiskBalancingArgs(nil, tt.args))
			if diff := cmp.Diff(tt.want, got, ignoreWording); diff != "" {
				t.Errorf("errors mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateUsageAwareFitArgs(t *testing.T) {
	tests := []struct {
		name string
		args *UsageAwareFitArgs
		want field.ErrorList
	}{
		{name: "defaults are valid", args: &UsageAwareFitArgs{}},
		{
			name: "overcommit below one and max usage above 100",
			args: &UsageAwareFitArgs{
				MaxOvercommit: map[usage.Resource]float64{usage.CPU: 0.5},
				MaxUsage:      map[usage.Resource]float64{usage.Memory: 101},
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("maxOvercommit").Key("cpu"), nil, ""),
				field.Invalid(field.NewPath("maxUsage").Key("memory"), nil, ""),
			},
		},
		{
			name: "unknown overcommit resource",
			args: &UsageAwareFitArgs{MaxOvercommit: map[usage.Resource]float64{"pods": 2}},
			want: field.ErrorList{field.NotSupported[string](field.NewPath("maxOvercommit"), nil, nil)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			SetDefaults_UsageAwareFitArgs(tt.args)
			got := errorList(t, ValidateUsageAwareFitArgs(nil, tt.args))
			if diff := cmp.Diff(tt.want, got, ignoreWording); diff != "" {
				t.Errorf("errors mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}
