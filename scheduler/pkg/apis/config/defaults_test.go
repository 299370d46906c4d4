package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// defaultLoadAwareArgs are LoadAware's defaults, spelt out, changed by
// change.
func defaultLoadAwareArgs(change func(*LoadAwareArgs)) *LoadAwareArgs {
	a := &LoadAwareArgs{
		Settings: loadmodel.Settings{
			Thresholds:          map[usage.Resource]float64{usage.CPU: 85, usage.Memory: 90},
			ThresholdStatistics: map[usage.Resource]UsageStatistic{usage.CPU: Average, usage.Memory: Latest},
			ScoringStrategy: &ScoringStrategy{
				Type:              LeastLoaded,
				Resources:         []ResourceSpec{{Name: usage.CPU, Weight: 1}, {Name: usage.Memory, Weight: 1}},
				Combine:           Bottleneck,
				TargetUtilization: ptr.To(70.0),
				Weight:            1,
			},
			Window: &metav1.Duration{Duration: 5 * time.Minute},
			PodEstimate: &PodEstimate{
				RequestMultiplier: ptr.To(1.0),
				DefaultCPU:        ptr.To(resource.MustParse("100m")),
				DefaultMemory:     ptr.To(resource.MustParse("200Mi")),
			},
		},
		PlacementEvents: ptr.To(true),
	}
	change(a)
	return a
}

func TestSetDefaultsLoadAwareArgs(t *testing.T) {
	tests := []struct {
		name string
		in   *LoadAwareArgs
		want *LoadAwareArgs
	}{
		{
			name: "empty args get every default",
			in:   &LoadAwareArgs{},
			want: defaultLoadAwareArgs(func(*LoadAwareArgs) {}),
		},
		{
			name: "set fields are kept, a partial threshold map is not completed, statistics are",
			in: &LoadAwareArgs{
				Settings: loadmodel.Settings{
					Thresholds:          map[usage.Resource]float64{usage.Memory: 80},
					ThresholdStatistics: map[usage.Resource]UsageStatistic{usage.Memory: P95},
					ScoringStrategy:     &ScoringStrategy{Type: TargetPacking, TargetUtilization: ptr.To(60.0), Combine: WeightedMean},
					Window:              &metav1.Duration{Duration: time.Minute},
					PodEstimate:         &PodEstimate{RequestMultiplier: ptr.To(1.5)},
				},
			},
			want: defaultLoadAwareArgs(func(a *LoadAwareArgs) {
				a.Thresholds = map[usage.Resource]float64{usage.Memory: 80}
				a.ThresholdStatistics[usage.Memory] = P95
				a.ScoringStrategy.Type, a.ScoringStrategy.TargetUtilization, a.ScoringStrategy.Combine = TargetPacking, ptr.To(60.0), WeightedMean
				a.Window.Duration = time.Minute
				a.PodEstimate.RequestMultiplier = ptr.To(1.5)
			}),
		},
		{
			// The terms are off unless set; set, each gets its defaults, the
			// risk those of LoadVariationRiskBalancing.
			name: "score terms",
			in: &LoadAwareArgs{
				Settings: loadmodel.Settings{
					ScoringStrategy: &ScoringStrategy{Weight: 5},
				},
				VariationRisk:   &VariationRiskTerm{SafeVarianceMargin: ptr.To(2.0)},
				PodCountBalance: &PodCountBalanceTerm{},
			},
			want: defaultLoadAwareArgs(func(a *LoadAwareArgs) {
				a.ScoringStrategy.Weight = 5
				a.VariationRisk = &VariationRiskTerm{
					Weight:                  1,
					SafeVarianceMargin:      ptr.To(2.0),
					SafeVarianceSensitivity: ptr.To(1.0),
					Window:                  &metav1.Duration{Duration: 15 * time.Minute},
					Resources:               []ResourceSpec{{Name: usage.CPU, Weight: 1}, {Name: usage.Memory, Weight: 1}},
				}
				a.PodCountBalance = &PodCountBalanceTerm{Weight: 1}
			}),
		},
		{
			// Planned moves are off unless set; set, a plan holds 5m.
			name: "planned moves",
			in:   &LoadAwareArgs{PlannedMoves: &PlannedMoves{Namespace: "ballast", Name: "moves"}},
			want: defaultLoadAwareArgs(func(a *LoadAwareArgs) {
				a.PlannedMoves = &PlannedMoves{Namespace: "ballast", Name: "moves", ValidFor: &metav1.Duration{Duration: 5 * time.Minute}}
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			SetDefaults_LoadAwareArgs(tt.in)
			if diff := cmp.Diff(tt.want, tt.in); diff != "" {
				t.Errorf("defaults mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsLoadVariationRiskBalancingArgs(t *testing.T) {
	got := &LoadVariationRiskBalancingArgs{SafeVarianceMargin: ptr.To(2.0)}
	SetDefaults_LoadVariationRiskBalancingArgs(got)
	want := &LoadVariationRiskBalancingArgs{
		SafeVarianceMargin:      ptr.To(2.0),
		SafeVarianceSensitivity: ptr.To(1.0),
		Window:                  &metav1.Duration{Duration: 15 * time.Minute},
		Resources:               []ResourceSpec{{Name: usage.CPU, Weight: 1}, {Name: usage.Memory, Weight: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults mismatch (-want,+got):\n%s", diff)
	}
}

func TestSetDefaultsUsageAwareFitArgs(t *testing.T) {
	got := &UsageAwareFitArgs{MaxOvercommit: map[usage.Resource]float64{usage.CPU: 2}}
	SetDefaults_UsageAwareFitArgs(got)
	want := &UsageAwareFitArgs{
		MaxOvercommit: map[usage.Resource]float64{usage.CPU: 2},
		MaxUsage:      map[usage.Resource]float64{usage.CPU: 80, usage.Memory: 80},
		Window:        &metav1.Duration{Duration: 5 * time.Minute},
		PodEstimate: &PodEstimate{
			RequestMultiplier: ptr.To(1.0),
			DefaultCPU:        ptr.To(resource.MustParse("100m")),
			DefaultMemory:     ptr.To(resource.MustParse("200Mi")),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults mismatch (-want,+got):\n%s", diff)
	}
}
