package provider

import (
	"math"
	"testing"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name        string
		v, ceiling  float64
		want        float64
		wantVerdict Verdict
		wantOK      bool
	}{
		{name: "in range", v: 42.5, ceiling: 100, want: 42.5, wantVerdict: Accepted, wantOK: true},
		{name: "zero is a real value", v: 0, ceiling: 100, want: 0, wantVerdict: Accepted, wantOK: true},
		{name: "at ceiling", v: 125, ceiling: 125, want: 125, wantVerdict: Accepted, wantOK: true},
		{name: "over ceiling clamps", v: 300, ceiling: 125, want: 125, wantVerdict: ClampedOverCapacity, wantOK: true},
		{name: "NaN dropped", v: math.NaN(), ceiling: 100, wantVerdict: DroppedNaN},
		{name: "+Inf dropped", v: math.Inf(1), ceiling: 100, wantVerdict: DroppedNaN},
		{name: "negative dropped", v: -0.1, ceiling: 100, wantVerdict: DroppedNegative},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verdict, ok := Sanitize(tt.v, tt.ceiling)
			if got != tt.want || verdict != tt.wantVerdict || ok != tt.wantOK {
				t.Errorf("Sanitize(%v, %v) = (%v, %v, %v), want (%v, %v, %v)", tt.v, tt.ceiling, got, verdict, ok, tt.want, tt.wantVerdict, tt.wantOK)
			}
		})
	}
}

func TestCeiling(t *testing.T) {
	tests := []struct {
		name                  string
		capacity, allocatable int64
		want                  float64
	}{
		// 4 cores, 3.2 allocatable: 4/3.2 = 125 %.
		{name: "reserved share", capacity: 4000, allocatable: 3200, want: 125},
		{name: "nothing reserved", capacity: 4000, allocatable: 4000, want: 100},
		{name: "unknown capacity", capacity: 0, allocatable: 4000, want: 100},
		{name: "inconsistent node", capacity: 1000, allocatable: 4000, want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ceiling(tt.capacity, tt.allocatable); got != tt.want {
				t.Errorf("Ceiling(%d, %d) = %v, want %v", tt.capacity, tt.allocatable, got, tt.want)
			}
		})
	}
}
