package loadmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ballast-sched/ballast/core/usage"
)

// reasonFormat is the text of Violation.Reason as a format.
const reasonFormat = "predicted %s usage %.1f exceeds threshold %g (percent of allocatable: node %.1f + recently bound pods %.1f + this pod %.1f)"

// Reason is appended by hand for speed; its text must stay what the
// format gives, for every figure, odd ones included.
func TestReasonIsItsFormat(t *testing.T) {
	odd := []float64{0, -0.04, 0.05, 0.15, 99.95, 1e21, -1e-7, math.NaN(), math.Inf(1), math.Inf(-1)}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		pick := func() float64 {
			if r.IntN(4) == 0 {
				return odd[r.IntN(len(odd))]
			}
			return r.Float64() * 150
		}
		v := Violation{Prediction: Prediction{Resource: usage.Resources[r.IntN(len(usage.Resources))], Current: pick(), Pending: pick(), Pod: pick()},
			Threshold: []float64{90, 85, 87.5, 0.1, pick()}[r.IntN(5)]}
		want := fmt.Sprintf(reasonFormat, v.Resource, v.Total(), v.Threshold, v.Current, v.Pending, v.Pod)
		if got := v.Reason(); got != want {
			t.Fatalf("Reason() of %+v =\n%s\nwant\n%s", v, got, want)
		}
	}
}

// BenchmarkReason compares Reason with the same text from fmt.
func BenchmarkReason(b *testing.B) {
	v := Violation{Prediction: Prediction{Resource: usage.Memory, Current: 88, Pending: 3, Pod: 2.5}, Threshold: 90}
	b.Run("appended", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = v.Reason()
		}
	})
	b.Run("fmt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = fmt.Sprintf(reasonFormat, v.Resource, v.Total(), v.Threshold, v.Current, v.Pending, v.Pod)
		}
	})
}
