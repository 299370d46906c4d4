package loadscore

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

func TestPredict(t *testing.T) {
	tests := []struct {
		name        string
		current     float64
		pending     int64
		pod         int64
		allocatable int64
		want        Prediction
		wantOK      bool
		wantTotal   float64
	}{
		{
			// 40 + 100×400/4000 + 100×200/4000 = 40 + 10 + 5 = 55
			name: "sample plus pending plus pod", current: 40, pending: 400, pod: 200, allocatable: 4000,
			want: Prediction{Resource: usage.CPU, Current: 40, Pending: 10, Pod: 5}, wantOK: true, wantTotal: 55,
		},
		{
			// 120 + 0 + 100×100/1000 = 130: over 100 % stays visible
			name: "usage above 100 percent is kept", current: 120, pod: 100, allocatable: 1000,
			want: Prediction{Resource: usage.CPU, Current: 120, Pod: 10}, wantOK: true, wantTotal: 130,
		},
		{
			// allocatable 0: amounts cannot be converted and count as 0
			name: "zero allocatable", current: 10, pod: 100, allocatable: 0,
			want: Prediction{Resource: usage.CPU, Current: 10}, wantOK: true, wantTotal: 10,
		},
		{name: "NaN sample", current: math.NaN(), pod: 1, allocatable: 1, want: Prediction{Resource: usage.CPU}},
		{name: "infinite sample", current: math.Inf(1), pod: 1, allocatable: 1, want: Prediction{Resource: usage.CPU}},
		{name: "negative sample", current: -3, pod: 1, allocatable: 1, want: Prediction{Resource: usage.CPU}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Predict(usage.CPU, tt.current, tt.pending, tt.pod, tt.allocatable)
			if ok != tt.wantOK {
				t.Fatalf("Predict() ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Predict() mismatch (-want,+got):\n%s", diff)
			}
			if ok && got.Total() != tt.wantTotal {
				t.Errorf("Total() = %v, want %v", got.Total(), tt.wantTotal)
			}
		})
	}
}

func TestCheckThresholds(t *testing.T) {
	cpu := Prediction{Resource: usage.CPU, Current: 80, Pending: 3, Pod: 2}      // 85
	mem := Prediction{Resource: usage.Memory, Current: 88, Pending: 3, Pod: 2.5} // 93.5
	hot := Prediction{Resource: usage.CPU, Current: math.NaN()}                  // not a number
	tests := []struct {
		name       string
		preds      []Prediction
		thresholds map[usage.Resource]float64
		want       []string
	}{
		{
			// cpu 85 is not above 85; memory 93.5 > 90
			name:       "memory above, cpu exactly at the threshold",
			preds:      []Prediction{cpu, mem},
			thresholds: map[usage.Resource]float64{usage.CPU: 85, usage.Memory: 90},
			want:       []string{"predicted memory usage 93.5 exceeds threshold 90 (percent of allocatable: node 88.0 + recently bound pods 3.0 + this pod 2.5)"},
		},
		{
			// 85 > 80 and 93.5 > 90
			name:       "both above",
			preds:      []Prediction{cpu, mem},
			thresholds: map[usage.Resource]float64{usage.CPU: 80, usage.Memory: 90},
			want: []string{
				"predicted cpu usage 85.0 exceeds threshold 80 (percent of allocatable: node 80.0 + recently bound pods 3.0 + this pod 2.0)",
				"predicted memory usage 93.5 exceeds threshold 90 (percent of allocatable: node 88.0 + recently bound pods 3.0 + this pod 2.5)",
			},
		},
		{
			// memory has no threshold, cpu 85 ≤ 99
			name:       "resource without threshold is not checked",
			preds:      []Prediction{cpu, mem},
			thresholds: map[usage.Resource]float64{usage.CPU: 99},
		},
		{
			name:       "NaN total violates",
			preds:      []Prediction{hot},
			thresholds: map[usage.Resource]float64{usage.CPU: 99},
			want:       []string{"predicted cpu usage NaN exceeds threshold 99 (percent of allocatable: node NaN + recently bound pods 0.0 + this pod 0.0)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range CheckThresholds(tt.preds, tt.thresholds) {
				got = append(got, v.Reason())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckThresholds() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}
