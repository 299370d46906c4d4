package podusage

import (
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

func TestTrend(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const mib = 1 << 20
	// wobble is a reproducible ±15 MiB around zero.
	wobble := func(i int) float64 { return 15 * mib * math.Sin(float64(i)*2.3) }
	tests := []struct {
		name string
		// memory is the pod's memory at the i-th sample, one every 30s.
		memory  func(i int) float64
		samples int
		want    bool
		// rate is the MiB/min expected when growing.
		rate float64
	}{
		{name: "a leak, 4 MiB/min with noise", memory: func(i int) float64 { return 200*mib + 2*mib*float64(i) + wobble(i) }, samples: 30, want: true, rate: 4},
		{name: "a slow leak, 1 MiB/min", memory: func(i int) float64 { return 500*mib + 0.5*mib*float64(i) }, samples: 30, want: true, rate: 1},
		{name: "flat with noise", memory: func(i int) float64 { return 400*mib + wobble(i) }, samples: 30},
		{name: "shrinking", memory: func(i int) float64 { return 900*mib - 3*mib*float64(i) }, samples: 30},
		// A sawtooth (a cache emptied every five minutes) rises most of the
		// time but comes back down: no line fits it.
		{name: "sawtooth", memory: func(i int) float64 { return 300*mib + 20*mib*float64(i%10) }, samples: 30},
		// Rising, but sampled for less than the minimum span.
		{name: "too short", memory: func(i int) float64 { return 200*mib + 4*mib*float64(i) }, samples: 15},
		// It rose, then restarted: the newest sample is back at the start.
		{name: "restarted", memory: func(i int) float64 {
			if i == 29 {
				return 200 * mib
			}
			return 200*mib + 10*mib*float64(i)
		}, samples: 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Trend{}
			pod := types.NamespacedName{Namespace: "apps", Name: "cache-0"}
			for i := range tc.samples {
				tr.Observe(t0.Add(time.Duration(i)*30*time.Second), map[types.NamespacedName]loadmodel.Amount{pod: {Memory: int64(tc.memory(i))}})
			}
			g, ok := tr.Growth(pod)
			if ok != tc.want {
				t.Fatalf("growing = %v (%+v), want %v", ok, g, tc.want)
			}
			if _, listed := tr.Growing()[pod]; listed != tc.want {
				t.Errorf("Growing() lists the pod: %v, want %v", listed, tc.want)
			}
			if tc.want && math.Abs(g.MiBPerMinute()-tc.rate) > 0.1*tc.rate {
				t.Errorf("%.2f MiB/min, want %.2f", g.MiBPerMinute(), tc.rate)
			}
		})
	}
}

// The span bounds what a Trend keeps, and a pod missing from a sampling
// round is forgotten, so a later pod of the same name starts afresh.
func TestTrendForgets(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	pod := types.NamespacedName{Namespace: "apps", Name: "cache-0"}
	tr := &Trend{Span: 10 * time.Minute, MinSpan: 5 * time.Minute}
	// Flat for an hour, then rising for the last ten minutes: only the
	// rise is within the span.
	for i := range 120 {
		m := int64(300 << 20)
		if i >= 100 {
			m += int64(i-100) * 4 << 20
		}
		tr.Observe(t0.Add(time.Duration(i)*30*time.Second), map[types.NamespacedName]loadmodel.Amount{pod: {Memory: m}})
	}
	if got := len(tr.pods[pod]); got > 21 {
		t.Errorf("%d samples kept, want at most the span's 21", got)
	}
	if _, ok := tr.Growth(pod); !ok {
		t.Error("the last ten minutes rise: want growing")
	}
	tr.Observe(t0.Add(2*time.Hour), map[types.NamespacedName]loadmodel.Amount{})
	if _, ok := tr.pods[pod]; ok {
		t.Error("a pod missing from a round is still remembered")
	}
}
