package nodeload

import (
	"sync"
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
//
// What the plugins read per node and pod is not this cache but the Tracker's
// node tables, which hold each node's sum; the cache tells the Tracker
// (OnChange) which node's sum to work out again when a pod lands on it or
// leaves it.
type PendingPods struct {
	mu        sync.RWMutex
	byNode    map[string]map[types.UID]*pendingPod
	nodeOf    map[types.UID]string
	expiry    time.Duration
	now       func() time.Time
	lastSweep time.Time
	// onChange is told, outside the lock, each node whose pending pods
	// changed.
	onChange func(node string)
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
		byNode: map[string]map[types.UID]*pendingPod{},
		nodeOf: map[types.UID]string{},
		expiry: expiry,
		now:    now,
	}
}

// OnChange sets the function told, outside the cache's lock, of each node
// whose pending pods changed; the Tracker works that node's sums out again.
// Set it before the cache is used.
func (c *PendingPods) OnChange(f func(node string)) { c.onChange = f }

func (c *PendingPods) changed(nodes ...string) {
	if c.onChange == nil {
		return
	}
	for _, n := range nodes {
		if n != "" {
			c.onChange(n)
		}
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
	c.put(pod, pod.Spec.NodeName, loadmodel.UsageSince(pod), nil)
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
	node := c.forgetLocked(uid)
	c.mu.Unlock()
	c.changed(node)
}

// forgetLocked drops a pod and returns the node it was remembered on, ""
// when it was not.
func (c *PendingPods) forgetLocked(uid types.UID) string {
	node, ok := c.nodeOf[uid]
	if !ok {
		return ""
	}
	delete(c.nodeOf, uid)
	pods := c.byNode[node]
	delete(pods, uid)
	if len(pods) == 0 {
		delete(c.byNode, node)
	}
	return node
}

func (c *PendingPods) put(pod *v1.Pod, node string, since time.Time, measured *loadmodel.Amount) {
	now := c.now()
	resources := loadmodel.ResourcesOf(pod)
	c.mu.Lock()
	changed := c.sweepLocked(now)
	old := c.nodeOf[pod.UID]
	if prev, ok := c.byNode[old][pod.UID]; ok {
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
		// The informer reports every status change of a pod; most change
		// nothing a sum depends on.
		if old == node && prev.since.Equal(since) && prev.measured == measured && prev.resources.Equal(resources) {
			c.mu.Unlock()
			c.changed(changed...)
			return
		}
	}
	c.forgetLocked(pod.UID)
	changed = append(changed, old)
	if now.Sub(since) <= c.expiry {
		pods := c.byNode[node]
		if pods == nil {
			pods = map[types.UID]*pendingPod{}
			c.byNode[node] = pods
		}
		pods[pod.UID] = &pendingPod{resources: resources, measured: measured, node: node, since: since}
		c.nodeOf[pod.UID] = node
		if node != old {
			changed = append(changed, node)
		}
	}
	c.mu.Unlock()
	c.changed(changed...)
}

// sweepLocked drops expired entries, at most once per tenth of the expiry,
// and returns the nodes it dropped pods of.
func (c *PendingPods) sweepLocked(now time.Time) []string {
	if now.Sub(c.lastSweep) < c.expiry/10 {
		return nil
	}
	c.lastSweep = now
	var nodes []string
	for uid, node := range c.nodeOf {
		if now.Sub(c.byNode[node][uid].since) > c.expiry {
			c.forgetLocked(uid)
			nodes = append(nodes, node)
		}
	}
	return nodes
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
	sum, _ := c.SumAt(c.now(), node, sampleTime, window, opts)
	return sum
}

// SumAt is Sum at the time now, and also says until when the sum holds:
// until the first pod it counts expires (now plus the expiry when it counts
// none). Before then, the sum changes only when a pod lands on the node or
// leaves it (see OnChange) or a new sample arrives.
func (c *PendingPods) SumAt(now time.Time, node string, sampleTime time.Time, window time.Duration, opts loadmodel.EstimateOptions) (loadmodel.Amount, time.Time) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var sum loadmodel.Amount
	validUntil := now.Add(c.expiry)
	// Whole units per pod, so the sum does not depend on the map's order.
	for _, p := range c.byNode[node] {
		expires := p.since.Add(c.expiry)
		if !now.Before(expires) {
			continue
		}
		left := loadmodel.Unsampled(sampleTime.Sub(p.since), window)
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
	return sum, validUntil
}

// estimate is what the pod is expected to use: its siblings' measured usage
// when known, else the estimate from its requests with opts.
func (p *pendingPod) estimate(opts loadmodel.EstimateOptions) loadmodel.Amount {
	if p.measured != nil {
		return *p.measured
	}
	return p.resources.Estimate(opts)
}
