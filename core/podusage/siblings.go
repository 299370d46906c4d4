package podusage

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

const (
	// DefaultSample is how many running siblings are measured at most.
	DefaultSample = 5
	// DefaultTTL is how long a workload's measured usage is reused: about
	// one metrics-server resolution and load-watcher sampling period, so
	// a burst of replicas costs one round of requests.
	DefaultTTL = 30 * time.Second
	// lookupTimeout bounds the metrics requests of one estimate: scheduling
	// goes on by requests rather than wait.
	lookupTimeout = 2 * time.Second
)

// SiblingsOptions configure Siblings.
type SiblingsOptions struct {
	// Sample is how many running siblings are measured at most; defaults
	// to DefaultSample.
	Sample int
	// TTL is how long a workload's measurement is reused; defaults to DefaultTTL.
	TTL time.Duration
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
}

// Siblings estimates a pod by the measured usage of its siblings: the
// running pods with the same controller (ReplicaSet, StatefulSet, Job, …).
//
// The estimate is the median, per resource, of up to Sample siblings' usage
// — the longest-running ones, whose usage has settled and which
// metrics-server has measured. It is remembered per controller for TTL, and
// while no sibling runs nothing is asked. A pod without a controller, or
// whose siblings have no metrics, has no estimate: the caller falls back to
// its requests.
type Siblings struct {
	usage  Source
	pods   corelisters.PodLister
	sample int
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	known map[types.UID]measured
}

// measured is one controller's remembered estimate.
type measured struct {
	amount loadmodel.Amount
	// ok is false when the siblings ran but none had metrics.
	ok bool
	at time.Time
}

// NewSiblings estimates pods by their siblings found in pods, measured by usage.
func NewSiblings(usage Source, pods corelisters.PodLister, o SiblingsOptions) *Siblings {
	if o.Sample <= 0 {
		o.Sample = DefaultSample
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Siblings{usage: usage, pods: pods, sample: o.Sample, ttl: o.TTL, now: o.Now, known: map[types.UID]measured{}}
}

// Estimate returns what pod is expected to use, measured on its siblings,
// and whether there is such a measurement.
func (s *Siblings) Estimate(ctx context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	if s == nil || s.usage == nil || s.pods == nil {
		return loadmodel.Amount{}, false
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return loadmodel.Amount{}, false
	}
	now := s.now()
	s.mu.Lock()
	m, hit := s.known[owner.UID]
	s.mu.Unlock()
	if hit && now.Sub(m.at) < s.ttl {
		return m.amount, m.ok
	}
	running := s.running(pod, owner.UID)
	if len(running) == 0 {
		// Nothing to measure yet; asking again costs only a cache lookup.
		return loadmodel.Amount{}, false
	}
	m = measured{at: now}
	m.amount, m.ok = s.measure(ctx, running)
	s.mu.Lock()
	s.sweepLocked(now)
	s.known[owner.UID] = m
	s.mu.Unlock()
	return m.amount, m.ok
}

// running returns the siblings of pod that run, longest-running first, at
// most Sample of them. Siblings that started together are taken by node,
// then by name: a workload's pod names are random, and a sample chosen by
// them alone would measure other pods each time the same placement is
// replayed.
func (s *Siblings) running(pod *v1.Pod, owner types.UID) []*v1.Pod {
	all, err := s.pods.Pods(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*v1.Pod
	for _, p := range all {
		if p.UID == pod.UID || p.Status.Phase != v1.PodRunning || p.DeletionTimestamp != nil || p.Status.StartTime == nil {
			continue
		}
		if c := metav1.GetControllerOf(p); c != nil && c.UID == owner {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *v1.Pod) int {
		if c := a.Status.StartTime.Compare(b.Status.StartTime.Time); c != 0 {
			return c
		}
		if c := strings.Compare(a.Spec.NodeName, b.Spec.NodeName); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(len(out), s.sample)]
}

// measure returns the per-resource median usage of pods that have metrics.
func (s *Siblings) measure(ctx context.Context, pods []*v1.Pod) (loadmodel.Amount, bool) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	var cpu, mem []int64
	for _, p := range pods {
		if a, ok := s.usage.PodUsage(ctx, p); ok {
			cpu, mem = append(cpu, a.MilliCPU), append(mem, a.Memory)
		}
	}
	if len(cpu) == 0 {
		return loadmodel.Amount{}, false
	}
	return loadmodel.Amount{MilliCPU: median(cpu), Memory: median(mem)}, true
}

// sweepLocked forgets measurements older than the TTL, so controllers that
// are gone do not stay.
func (s *Siblings) sweepLocked(now time.Time) {
	for uid, m := range s.known {
		if now.Sub(m.at) >= s.ttl {
			delete(s.known, uid)
		}
	}
}

// median returns the middle value of v (the mean of the two middle ones
// for an even count); v is reordered.
func median(v []int64) int64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
