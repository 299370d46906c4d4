package loadmodel

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestPredict(t *testing.T) {
	both := []usage.Resource{usage.CPU, usage.Memory}
	alloc := Amount{MilliCPU: 4000, Memory: 1000}
	tests := []struct {
		name      string
		current   map[usage.Resource]float64
		pending   Amount
		pod       Amount
		alloc     Amount
		want      []Prediction
		wantOK    bool
		wantTotal []float64
	}{
		{
			// cpu: 40 + 100×400/4000 + 100×200/4000 = 55; memory: 60 + 0 + 100×50/1000 = 65
			name: "usage plus pending plus pod", current: map[usage.Resource]float64{usage.CPU: 40, usage.Memory: 60},
			pending: Amount{MilliCPU: 400}, pod: Amount{MilliCPU: 200, Memory: 50}, alloc: alloc,
			want: []Prediction{
				{Resource: usage.CPU, Current: 40, Pending: 10, Pod: 5},
				{Resource: usage.Memory, Current: 60, Pod: 5},
			},
			wantOK: true, wantTotal: []float64{55, 65},
		},
		{
			// cpu: 120 + 100×400/4000 = 130
			name: "usage above 100 percent is kept", current: map[usage.Resource]float64{usage.CPU: 120, usage.Memory: 0},
			pod: Amount{MilliCPU: 400}, alloc: alloc,
			want:   []Prediction{{Resource: usage.CPU, Current: 120, Pod: 10}, {Resource: usage.Memory}},
			wantOK: true, wantTotal: []float64{130, 0},
		},
		{
			name: "zero allocatable", current: map[usage.Resource]float64{usage.CPU: 10, usage.Memory: 20},
			pod:    Amount{MilliCPU: 100, Memory: 1},
			want:   []Prediction{{Resource: usage.CPU, Current: 10}, {Resource: usage.Memory, Current: 20}},
			wantOK: true, wantTotal: []float64{10, 20},
		},
		{
			name: "missing resource", current: map[usage.Resource]float64{usage.CPU: 10}, alloc: alloc,
			want: []Prediction{{Resource: usage.CPU, Current: 10}},
		},
		{name: "NaN usage", current: map[usage.Resource]float64{usage.CPU: math.NaN(), usage.Memory: 1}, alloc: alloc},
		{name: "infinite usage", current: map[usage.Resource]float64{usage.CPU: math.Inf(1), usage.Memory: 1}, alloc: alloc},
		{name: "negative usage", current: map[usage.Resource]float64{usage.CPU: -3, usage.Memory: 1}, alloc: alloc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current := func(r usage.Resource) (float64, bool) {
				v, ok := tt.current[r]
				return v, ok
			}
			got, ok := Predict(nil, both, current, tt.pending, tt.pod, tt.alloc)
			if ok != tt.wantOK {
				t.Fatalf("Predict() ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Predict() mismatch (-want,+got):\n%s", diff)
			}
			if !ok {
				return
			}
			for i, p := range got {
				if p.Total() != tt.wantTotal[i] {
					t.Errorf("%s Total() = %v, want %v", p.Resource, p.Total(), tt.wantTotal[i])
				}
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
