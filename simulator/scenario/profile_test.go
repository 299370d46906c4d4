package scenario

import (
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProfileAt(t *testing.T) {
	q := resource.MustParse
	d := func(s string) metav1.Duration { v, _ := time.ParseDuration(s); return metav1.Duration{Duration: v} }
	ramp := Profile{Type: Ramp, From: q("100Mi"), To: q("500Mi"), Start: d("1m"), Over: d("4m")}
	spike := Profile{Type: Spike, Value: q("200m"), Peak: q("2"), At: d("10m"), For: d("1m")}
	noisy := Profile{Type: Noisy, Value: q("1"), Stddev: q("250m")}
	wave := Profile{Type: Wave, Value: q("400m"), Amplitude: q("300m"), Period: d("8m")}
	const mi = 1 << 20
	tests := []struct {
		name  string
		p     Profile
		t     time.Duration
		noise float64
		want  float64
	}{
		{name: "constant", p: Profile{Type: Constant, Value: q("300m")}, t: time.Hour, want: 0.3},
		{name: "ramp before start", p: ramp, t: 30 * time.Second, want: 100 * mi},
		// 1m into a 4m ramp from 100Mi to 500Mi: 100 + 400×¼ = 200Mi.
		{name: "ramp a quarter in", p: ramp, t: 2 * time.Minute, want: 200 * mi},
		{name: "ramp after end", p: ramp, t: time.Hour, want: 500 * mi},
		{name: "spike before", p: spike, t: 9 * time.Minute, want: 0.2},
		{name: "spike during", p: spike, t: 10*time.Minute + 30*time.Second, want: 2},
		{name: "spike over (end is exclusive)", p: spike, t: 11 * time.Minute, want: 0.2},
		// 1 + 1.5×0.25 = 1.375 cores.
		{name: "noisy draw", p: noisy, noise: 1.5, want: 1.375},
		// 1 − 6×0.25 = −0.5, clamped.
		{name: "noisy never negative", p: noisy, noise: -6, want: 0},
		// A quarter period in, the top: 400m + 300m; three quarters, the
		// bottom: 400m − 300m; a whole period, back at 400m.
		{name: "wave at its top", p: wave, t: 2 * time.Minute, want: 0.7},
		{name: "wave at its bottom", p: wave, t: 6 * time.Minute, want: 0.1},
		{name: "wave a period on", p: wave, t: 8 * time.Minute, want: 0.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Amount(tt.t, tt.noise); math.Abs(got-tt.want) > 1e-6*math.Max(1, tt.want) {
				t.Errorf("Amount(%v, %v) = %v, want %v", tt.t, tt.noise, got, tt.want)
			}
		})
	}
}

func TestNoiseAtIsReproducible(t *testing.T) {
	a := NoiseAt(42, "web/0/cpu", 7)
	if b := NoiseAt(42, "web/0/cpu", 7); a != b {
		t.Errorf("same inputs gave %v then %v", a, b)
	}
	differs := 0
	for _, other := range []float64{NoiseAt(43, "web/0/cpu", 7), NoiseAt(42, "web/1/cpu", 7), NoiseAt(42, "web/0/cpu", 8)} {
		if other != a {
			differs++
		}
	}
	if differs != 3 {
		t.Errorf("changing seed, key or step changed the draw %d of 3 times", differs)
	}
	// A standard normal: over many steps the mean is near 0 and the variance near 1.
	var sum, sumSq float64
	const n = 20000
	for i := range int64(n) {
		v := NoiseAt(1, "k", i)
		sum += v
		sumSq += v * v
	}
	mean := sum / n
	variance := sumSq/n - mean*mean
	if math.Abs(mean) > 0.05 || math.Abs(variance-1) > 0.05 {
		t.Errorf("mean %.3f variance %.3f, want about 0 and 1", mean, variance)
	}
}
