package nodeload

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time                   { return c.t }
func (c *fakeClock) step(d time.Duration)             { c.t = c.t.Add(d) }
func at(base time.Time, d time.Duration) *metav1.Time { t := metav1.NewTime(base.Add(d)); return &t }

// Every pod has one container without requests, estimated at the defaults
// 1000m / 1000 bytes so fractions are easy to read.
var flat = loadmodel.EstimateOptions{RequestMultiplier: 1, DefaultMilliCPU: 1000, DefaultMemory: 1000}

func boundPod(uid, node string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "app"}}}}
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestPendingPodsLifecycle(t *testing.T) {
	clock := &fakeClock{t: t0}
	c := NewPendingPods(20*time.Minute, clock.now)
	sample := t0.Add(-10 * time.Second) // the node was sampled before the pod was placed
	window := 5 * time.Minute

	// Reserved now, after the sample: all of it is pending.
	c.Assume(boundPod("a", "n1"), "n1", nil)
	if diff := cmp.Diff(loadmodel.Amount{MilliCPU: 1000, Memory: 1000}, c.Sum("n1", sample, window, flat)); diff != "" {
		t.Fatalf("just reserved (-want,+got):\n%s", diff)
	}
	if got := c.Sum("n2", sample, window, flat); got != (loadmodel.Amount{}) {
		t.Fatalf("other node: got %+v, want nothing pending", got)
	}

	// The pod started at t0+30s; a sample at t0+30s+1m covers 1m of a 5m
	// window: 1000 × (1 − 1/5) = 800 still pending.
	running := boundPod("a", "n1")
	running.Status.StartTime = at(t0, 30*time.Second)
	clock.step(2 * time.Minute)
	c.Observe(running)
	if got := c.Sum("n1", t0.Add(90*time.Second), window, flat); got.MilliCPU != 800 {
		t.Errorf("after 1m of a 5m window: pending %d m, want 800", got.MilliCPU)
	}
	// A sample whose window fully covers the run contains the pod: nothing pending.
	if got := c.Sum("n1", t0.Add(30*time.Second+window), window, flat); got.MilliCPU != 0 {
		t.Errorf("window fully covers the pod: pending %d m, want 0", got.MilliCPU)
	}

	// The same question twice is answered from memory; a pod landing on the
	// node changes the answer.
	at0 := c.Sum("n1", t0.Add(-time.Minute), window, flat)
	c.Assume(boundPod("b", "n1"), "n1", nil)
	if got := c.Sum("n1", t0.Add(-time.Minute), window, flat); got.MilliCPU != at0.MilliCPU+1000 {
		t.Errorf("after another pod landed: pending %d m, want %d", got.MilliCPU, at0.MilliCPU+1000)
	}
	c.Forget("b")

	// Unreserve / deletion forgets it.
	c.Forget("a")
	if c.Len() != 0 {
		t.Errorf("after Forget: %d pods remembered, want 0", c.Len())
	}
}

func TestPendingPodsExpire(t *testing.T) {
	clock := &fakeClock{t: t0}
	c := NewPendingPods(20*time.Minute, clock.now)
	c.Assume(boundPod("a", "n1"), "n1", nil)

	// A stale sample from long ago would keep the pod pending forever; the
	// expiry stops that (scheduler-plugins issue #583).
	oldSample := t0.Add(-time.Hour)
	clock.step(21 * time.Minute)
	if got := c.Sum("n1", oldSample, 5*time.Minute, flat); got.MilliCPU != 0 {
		t.Errorf("expired entry still counted: %d m", got.MilliCPU)
	}
	// The next change sweeps it out of memory.
	c.Assume(boundPod("b", "n2"), "n2", nil)
	if c.Len() != 1 {
		t.Errorf("after sweep: %d pods remembered, want 1 (only b)", c.Len())
	}
}

func TestPendingPodsRestartUsesPodTimes(t *testing.T) {
	clock := &fakeClock{t: t0}
	c := NewPendingPods(20*time.Minute, clock.now)
	sample := t0.Add(-15 * time.Second)

	// Listed at start-up: a pod running for an hour is not pending at all
	// (older than the expiry), one bound 2 minutes ago is partly, one bound
	// 5 seconds ago (not started) fully.
	old := boundPod("old", "n1")
	old.Status.StartTime = at(t0, -time.Hour)
	recent := boundPod("recent", "n1")
	recent.Status.StartTime = at(t0, -2*time.Minute)
	fresh := boundPod("fresh", "n1")
	fresh.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: *at(t0, -5*time.Second)}}
	for _, p := range []*v1.Pod{old, recent, fresh} {
		c.Observe(p)
	}
	// recent: sample − start = 105s of a 300s window → 1000 × (1 − 105/300) = 650
	// fresh: bound after the sample → 1000
	if got := c.Sum("n1", sample, 5*time.Minute, flat); got.MilliCPU != 1650 {
		t.Errorf("after restart: pending %d m, want 1650 (650 recent + 1000 fresh, old ignored)", got.MilliCPU)
	}
	if c.Len() != 2 {
		t.Errorf("remembered %d pods, want 2 (the hour-old pod is not kept)", c.Len())
	}
}

func TestPendingPodsObserveForgetsFinishedPods(t *testing.T) {
	clock := &fakeClock{t: t0}
	c := NewPendingPods(0, clock.now)
	p := boundPod("a", "n1")
	p.CreationTimestamp = *at(t0, -time.Second)
	c.Observe(p)
	if c.Len() != 1 {
		t.Fatalf("bound pod not remembered")
	}
	done := p.DeepCopy()
	done.Status.Phase = v1.PodSucceeded
	c.Observe(done)
	if c.Len() != 0 {
		t.Errorf("finished pod still remembered")
	}
	c.Observe(boundPod("b", ""))
	if c.Len() != 0 {
		t.Errorf("unbound pod remembered")
	}
	// A pod moving nodes (re-created with the same UID in tests) is counted once.
	c.Assume(boundPod("c", "n1"), "n1", nil)
	c.Assume(boundPod("c", "n2"), "n2", nil)
	if got := c.Sum("n1", t0.Add(-time.Second), time.Minute, flat); got.MilliCPU != 0 {
		t.Errorf("pod still pending on its old node: %d m", got.MilliCPU)
	}
}

func TestPendingPodsKeepTheSiblingsEstimateOfAReservedPod(t *testing.T) {
	clock := &fakeClock{t: t0}
	c := NewPendingPods(20*time.Minute, clock.now)
	sample, window := t0.Add(-10*time.Second), 5*time.Minute
	measured := loadmodel.Amount{MilliCPU: 900, Memory: 700}

	c.Assume(boundPod("w", "n1"), "n1", &measured)
	if got := c.Sum("n1", sample, window, flat); got != measured {
		t.Fatalf("reserved with its siblings' usage: pending %+v, want %+v (not the request estimate)", got, measured)
	}
	// The binding reaches the informer: the pod is the same, so is its estimate.
	bound := boundPod("w", "n1")
	bound.CreationTimestamp = metav1.NewTime(t0)
	c.Observe(bound)
	if got := c.Sum("n1", sample, window, flat); got != measured {
		t.Errorf("after the informer saw the pod: pending %+v, want %+v", got, measured)
	}
	// A pod only the informer knows (another scheduler's, or from before a
	// restart) is estimated from its requests.
	other := boundPod("x", "n2")
	other.CreationTimestamp = metav1.NewTime(t0)
	c.Observe(other)
	if got := c.Sum("n2", sample, window, flat); got.MilliCPU != 1000 {
		t.Errorf("observed only: pending %d m, want the request estimate 1000", got.MilliCPU)
	}
}

// A time the pod reports from another clock (the binding's condition,
// stamped by the API server's or another scheduler's clock) that precedes
// the reservation does not move the pod's start back; a later start time
// (the kubelet's) does move it on.
func TestPendingPodsStartNoEarlierThanTheReservation(t *testing.T) {
	clock := &fakeClock{t: t0}
	c := NewPendingPods(20*time.Minute, clock.now)
	window := 5 * time.Minute
	c.Assume(boundPod("a", "n1"), "n1", nil)

	bound := boundPod("a", "n1")
	bound.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: *at(t0, -3*time.Minute)}}
	c.Observe(bound)
	// Started at t0 (the reservation), not 3 minutes before: a sample at
	// t0+1m covers 1m of 5 → 800 pending, not 1000 × (1 − 4/5) = 200.
	if got := c.Sum("n1", t0.Add(time.Minute), window, flat); got.MilliCPU != 800 {
		t.Errorf("pending %d m, want 800: the reservation's time stands", got.MilliCPU)
	}

	running := bound.DeepCopy()
	running.Status.StartTime = at(t0, 2*time.Minute)
	c.Observe(running)
	// Started at t0+2m: a sample at t0+3m covers 1m of 5 → 800.
	if got := c.Sum("n1", t0.Add(3*time.Minute), window, flat); got.MilliCPU != 800 {
		t.Errorf("pending %d m, want 800 from the kubelet's later start", got.MilliCPU)
	}

	// On another node the pod is another placement: its own time counts.
	moved := boundPod("a", "n2")
	moved.Status.StartTime = at(t0, -time.Minute)
	c.Observe(moved)
	if got := c.Sum("n2", t0, window, flat); got.MilliCPU != 800 {
		t.Errorf("pending on n2 %d m, want 800 from its own start", got.MilliCPU)
	}
}
