package nodeload

import (
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// DefaultExpiry is how long a bound pod is remembered at most. It is longer
// than load-watcher's largest default window (15m), after which every window
// fully contains the pod's usage.
const DefaultExpiry = 20 * time.Minute

// pendingPod is a pod bound to a node whose usage the node's samples may not
// contain yet.
type pendingPod struct {
	resources loadmodel.PodResources
	// measured is what the pod's siblings use, when that was known as it
	// was placed; it stands in for the estimate from resources.
	measured *loadmodel.Amount
	node     string
	// since is when the pod started using resources: its start time once it
	// runs, its bind time before that.
	since time.Time
}

// PendingPods remembers recently bound pods per node so their usage can be
// added to samples taken before they ran (anti-herding).
//
// Unlike a cache keyed on "now", entries carry the pod's own bind or start
// time, so a scheduler that restarts and lists existing pods does not count
// long-running pods again. Entries older than the expiry are ignored and
// swept, so the cache cannot grow without bound.
type PendingPods struct {
	mu        sync.RWMutex
	byNode    map[string]*nodePending
	nodeOf    map[types.UID]string
	expiry    time.Duration
	now       func() time.Time
	lastSweep time.Time
}

// memoSlots is how many (window, estimate options) combinations a node
// remembers its last sum for; the shipped profiles use two.
const memoSlots = 4

// nodePending is one node's pending pods and its remembered sums: the
// scheduler asks for the same node's sum at Filter and Score of every pod,
// and it only changes when a pod lands on or leaves that node or a new
// sample arrives.
type nodePending struct {
	pods map[types.UID]*pendingPod
	memo [memoSlots]atomic.Pointer[sumMemo]
}

type sumMemo struct {
	sampleTime int64
	window     time.Duration
	opts       loadmodel.EstimateOptions
	sum        loadmodel.Amount
	// validUntil is when the oldest counted pod expires.
	validUntil time.Time
}

// changedLocked forgets the node's remembered sums; the caller holds the
// write lock, so no reader is computing one.
func (n *nodePending) changedLocked() {
	for i := range n.memo {
		n.memo[i].Store(nil)
	}
}

// NewPendingPods returns an empty cache whose entries expire after expiry;
// now is the clock (time.Now outside tests).
func NewPendingPods(expiry time.Duration, now func() time.Time) *PendingPods {
	if expiry <= 0 {
		expiry = DefaultExpiry
	}
	if now == nil {
		now = time.Now
	}
	return &PendingPods{
		byNode: map[string]*nodePending{},
		nodeOf: map[types.UID]string{},
		expiry: expiry,
		now:    now,
	}
}

// Observe records a pod seen by the informer. A pod that is bound and not
// finished is remembered with its own start (or bind) time; any other pod is
// forgotten.
func (c *PendingPods) Observe(pod *v1.Pod) {
	if pod.Spec.NodeName == "" || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed || pod.DeletionTimestamp != nil {
		c.Forget(pod.UID)
		return
	}
	c.put(pod, pod.Spec.NodeName, usageSince(pod), nil)
}

// Assume records a pod the scheduler has just reserved on node, before the
// binding reaches the informer. measured, when not nil, is what the pod is
// expected to use (its siblings' usage) and is kept when the informer
// reports the pod again; nil estimates it from its requests.
func (c *PendingPods) Assume(pod *v1.Pod, node string, measured *loadmodel.Amount) {
	c.put(pod, node, c.now(), measured)
}

// NodeOf returns the node pod uid is remembered on, "" when it is not.
func (c *PendingPods) NodeOf(uid types.UID) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.nodeOf[uid]
}

// Forget drops a pod (deleted, finished or unreserved).
func (c *PendingPods) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(uid)
}

func (c *PendingPods) forgetLocked(uid types.UID) {
	node, ok := c.nodeOf[uid]
	if !ok {
		return
	}
	delete(c.nodeOf, uid)
	np := c.byNode[node]
	delete(np.pods, uid)
	np.changedLocked()
	if len(np.pods) == 0 {
		delete(c.byNode, node)
	}
}

func (c *PendingPods) put(pod *v1.Pod, node string, since time.Time, measured *loadmodel.Amount) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweepLocked(now)
	if old, ok := c.nodeOf[pod.UID]; ok {
		prev := c.byNode[old].pods[pod.UID]
		if measured == nil {
			measured = prev.measured
		}
		// A pod does not use a node before the scheduler placed it there:
		// a time the pod reports that precedes the reservation (the
		// binding's condition, stamped by another clock) does not move
		// its start back.
		if old == node && prev.since.After(since) {
			since = prev.since
		}
	}
	c.forgetLocked(pod.UID)
	if now.Sub(since) > c.expiry {
		return
	}
	np := c.byNode[node]
	if np == nil {
		np = &nodePending{pods: map[types.UID]*pendingPod{}}
		c.byNode[node] = np
	}
	np.pods[pod.UID] = &pendingPod{resources: loadmodel.ResourcesOf(pod), measured: measured, node: node, since: since}
	np.changedLocked()
	c.nodeOf[pod.UID] = node
}

// sweepLocked drops expired entries, at most once per tenth of the expiry.
func (c *PendingPods) sweepLocked(now time.Time) {
	if now.Sub(c.lastSweep) < c.expiry/10 {
		return
	}
	c.lastSweep = now
	for uid, node := range c.nodeOf {
		if now.Sub(c.byNode[node].pods[uid].since) > c.expiry {
			c.forgetLocked(uid)
		}
	}
}

// Len returns how many pods are remembered, expired or not.
func (c *PendingPods) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.nodeOf)
}

// Sum returns the usage of node's pending pods that a sample taken at
// sampleTime, averaged over window, does not contain yet. A pod that has used
// resources for d before the sample is contained for the fraction d/window of
// the window, so it still adds
//
//	estimate × (1 − clamp((sampleTime − since) / window, 0, 1))
//
// (all of it for pods that started after the sample, none once the window
// has fully covered it), each pod estimated by its siblings' usage when that
// was known as it was placed, else from its requests with opts.
func (c *PendingPods) Sum(node string, sampleTime time.Time, window time.Duration, opts loadmodel.EstimateOptions) loadmodel.Amount {
	return c.SumAt(c.now(), node, sampleTime, window, opts)
}

// SumAt is Sum at the time now: a plugin reads the clock once per
// scheduling cycle rather than once per node.
func (c *PendingPods) SumAt(now time.Time, node string, sampleTime time.Time, window time.Duration, opts loadmodel.EstimateOptions) loadmodel.Amount {
	c.mu.RLock()
	defer c.mu.RUnlock()
	np := c.byNode[node]
	if np == nil {
		return loadmodel.Amount{}
	}
	sample := sampleTime.UnixNano()
	// Each (window, options) pair keeps its own slot: look for it, else take
	// a free one (slots are cleared whenever the node's pods change).
	var slot *atomic.Pointer[sumMemo]
	for i := range np.memo {
		m := np.memo[i].Load()
		if m == nil {
			if slot == nil {
				slot = &np.memo[i]
			}
			continue
		}
		if m.window == window && m.opts == opts {
			if m.sampleTime == sample && now.Before(m.validUntil) {
				return m.sum
			}
			slot = &np.memo[i]
			break
		}
	}
	if slot == nil {
		slot = &np.memo[uint64(window/time.Second)%memoSlots]
	}
	var sum loadmodel.Amount
	validUntil := now.Add(c.expiry)
	for _, p := range np.pods {
		expires := p.since.Add(c.expiry)
		if !now.Before(expires) {
			continue
		}
		left := remaining(sampleTime.Sub(p.since), window)
		if left <= 0 {
			continue
		}
		if expires.Before(validUntil) {
			validUntil = expires
		}
		est := p.estimate(opts)
		sum.MilliCPU += int64(float64(est.MilliCPU) * left)
		sum.Memory += int64(float64(est.Memory) * left)
	}
	slot.Store(&sumMemo{sampleTime: sample, window: window, opts: opts, sum: sum, validUntil: validUntil})
	return sum
}

// estimate is what the pod is expected to use: its siblings' measured usage
// when known, else the estimate from its requests with opts.
func (p *pendingPod) estimate(opts loadmodel.EstimateOptions) loadmodel.Amount {
	if p.measured != nil {
		return *p.measured
	}
	return p.resources.Estimate(opts)
}

// remaining is the fraction of a pod's usage a window average does not yet
// contain when the pod ran for covered before the sample.
func remaining(covered, window time.Duration) float64 {
	switch {
	case covered <= 0:
		return 1
	case window <= 0 || covered >= window:
		return 0
	}
	return 1 - float64(covered)/float64(window)
}

// usageSince is when a pod began (or will begin) to use resources, from the
// pod itself so that it survives a scheduler restart: its start time, else
// when it was bound (the PodScheduled condition), else its creation.
func usageSince(pod *v1.Pod) time.Time {
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}
