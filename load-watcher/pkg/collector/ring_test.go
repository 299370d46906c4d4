package collector

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const ms = int64(time.Millisecond)

func TestRingWrapsAroundKeepingNewestInOrder(t *testing.T) {
	r := newRing(3)
	for i := int64(1); i <= 8; i++ { // wraps twice and a bit
		r.push(i*ms, float32(10*i), float32(i))
	}
	// Capacity 3: points 6, 7, 8 remain, oldest first.
	if diff := cmp.Diff([]float64{60, 70, 80}, r.since(nil, 0, true)); diff != "" {
		t.Errorf("cpu values (-want,+got):\n%s", diff)
	}
	if got, _ := r.newestTime(); got != 8*ms {
		t.Errorf("newest = %d, want %d", got, 8*ms)
	}
}

func TestRingWindowBoundary(t *testing.T) {
	r := newRing(4)
	for i := int64(1); i <= 4; i++ {
		r.push(i*ms, float32(i), float32(i))
	}
	// Strictly after the cutoff: a point taken at the cutoff is out, one a
	// millisecond later is in.
	if diff := cmp.Diff([]float64{3, 4}, r.since(nil, 2*ms, false)); diff != "" {
		t.Errorf("after cutoff 2ms (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{2, 3, 4}, r.since(nil, 2*ms-1, false)); diff != "" {
		t.Errorf("after cutoff 2ms-1ns (-want,+got):\n%s", diff)
	}
	// The newest point counts with its exact time, older ones to the millisecond.
	r.push(5*ms+999_999, 5, 5)
	if got, _ := r.newestTime(); got != 5*ms+999_999 {
		t.Errorf("newest = %d, want it exact", got)
	}
	if diff := cmp.Diff([]float64{5}, r.since(nil, 5*ms+999_998, true)); diff != "" {
		t.Errorf("after a cutoff just before the newest (-want,+got):\n%s", diff)
	}
}

func TestRingSkipsMissingValues(t *testing.T) {
	r := newRing(4)
	r.push(1*ms, 10, float32(math.NaN()))
	r.push(2*ms, float32(math.NaN()), 20)
	r.push(3*ms, 30, 30)
	if diff := cmp.Diff([]float64{10, 30}, r.since(nil, 0, true)); diff != "" {
		t.Errorf("cpu (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{20, 30}, r.since(nil, 0, false)); diff != "" {
		t.Errorf("memory (-want,+got):\n%s", diff)
	}
}

func TestRingRebasesAfterWeeks(t *testing.T) {
	day := int64(24 * time.Hour)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	r := newRing(4)
	// Millisecond offsets overflow int32 after ~24.8 days: the fourth
	// point, 27 days after the first, moves the base to itself, and the
	// first, now more than 24.8 days before the base, is dropped.
	for i := int64(0); i < 4; i++ {
		r.push(start+i*9*day, float32(i), float32(i))
	}
	if diff := cmp.Diff([]float64{1, 2, 3}, r.since(nil, 0, true)); diff != "" {
		t.Errorf("after rebasing (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{2, 3}, r.since(nil, start+15*day, true)); diff != "" {
		t.Errorf("after 15 days (-want,+got):\n%s", diff)
	}
	r.push(start+100*day, 9, 9)
	if diff := cmp.Diff([]float64{9}, r.since(nil, 0, true)); diff != "" {
		t.Errorf("after a long silence, the old points are gone (-want,+got):\n%s", diff)
	}
	if got, _ := r.newestTime(); got != start+100*day {
		t.Errorf("newest = %d, want %d", got, start+100*day)
	}
}
