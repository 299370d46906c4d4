package loadmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestStatisticsPick(t *testing.T) {
	s := usage.Stats{Avg: 40, Max: 90, P95: 80, Latest: 60, Samples: 5}
	tests := []struct {
		name  string
		stats Statistics
		r     usage.Resource
		want  float64
	}{
		{name: "average", stats: Statistics{usage.CPU: Average}, r: usage.CPU, want: 40},
		{name: "latest", stats: Statistics{usage.Memory: Latest}, r: usage.Memory, want: 60},
		{name: "p95", stats: Statistics{usage.CPU: P95}, r: usage.CPU, want: 80},
		{name: "unnamed resource reads the mean", stats: Statistics{usage.CPU: Latest}, r: usage.Memory, want: 40},
		{name: "nil reads the mean", r: usage.CPU, want: 40},
		{name: "defaults: memory on the newest sample", stats: DefaultStatistics(), r: usage.Memory, want: 60},
		{name: "defaults: cpu on the mean", stats: DefaultStatistics(), r: usage.CPU, want: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.stats.Pick(tt.r, s); got != tt.want {
				t.Errorf("Pick(%s) = %v, want %v", tt.r, got, tt.want)
			}
		})
	}
}

func TestStatisticsRead(t *testing.T) {
	nu := usage.NodeUsage{Windows: map[usage.Window]map[usage.Resource]usage.Stats{
		usage.Window5m: {usage.CPU: {Avg: 30, Latest: 50, Samples: 3}, usage.Memory: {Avg: 70}},
	}}
	stats := Statistics{usage.CPU: Latest}
	if got, ok := stats.Read(nu, usage.Window5m, usage.CPU); !ok || got != 50 {
		t.Errorf("Read(cpu) = %v, %v, want 50, true", got, ok)
	}
	// A window without samples has no usage.
	if _, ok := stats.Read(nu, usage.Window5m, usage.Memory); ok {
		t.Error("Read(memory) ok with no samples")
	}
	if _, ok := stats.Read(nu, usage.Window1m, usage.CPU); ok {
		t.Error("Read() ok for a missing window")
	}
}

func TestStatisticsComplete(t *testing.T) {
	tests := []struct {
		name  string
		stats Statistics
		want  Statistics
	}{
		{name: "nil gives the defaults", want: Statistics{usage.CPU: Average, usage.Memory: Latest}},
		{name: "set resources are kept", stats: Statistics{usage.Memory: P95}, want: Statistics{usage.CPU: Average, usage.Memory: P95}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.stats.Complete()); diff != "" {
				t.Errorf("Complete() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateStatistics(t *testing.T) {
	path := field.NewPath("thresholdStatistics")
	tests := []struct {
		name  string
		stats Statistics
		want  field.ErrorList
	}{
		{name: "defaults are valid", stats: DefaultStatistics()},
		{name: "nil is valid"},
		{
			name:  "unknown statistic and resource",
			stats: Statistics{usage.Memory: "Median", "gpu": Latest},
			want: field.ErrorList{
				field.NotSupported[string](path, nil, nil),
				field.NotSupported[string](path.Key("memory"), nil, nil),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateStatistics(path, tt.stats)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("ValidateStatistics() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}
