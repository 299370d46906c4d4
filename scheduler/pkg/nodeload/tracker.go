package nodeload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
)

// Source is where usage comes from: load-watcher's HTTP client or its
// in-process collector. Snapshot never blocks and returns nil before the
// first snapshot; stale nodes are already flagged. A Source that is also a
// podusage.Source tells what running pods use, and new pods are then
// estimated by their siblings' usage.
type Source interface {
	Snapshot() *usage.Snapshot
}

// Cause says why a node's usage cannot be used.
type Cause string

const (
	// CauseNone means the usage is there and fresh.
	CauseNone Cause = ""
	// CauseMissing means load-watcher has no usage for the node (unreachable,
	// not started yet, new node, window not kept).
	CauseMissing Cause = "UsageMissing"
	// CauseStale means the node's newest sample is older than the staleness threshold.
	CauseStale Cause = "UsageStale"
	// CauseInvalid means the sample is not a usable number (NaN, infinite,
	// negative), or the load-watcher client refused the node's data (out of
	// range, stamped in the future; see usage.NodeUsage.Invalid).
	CauseInvalid Cause = "UsageInvalid"
)

// Options configure a Tracker.
type Options struct {
	// Expiry bounds how long a bound pod counts as pending. Defaults to DefaultExpiry.
	Expiry time.Duration
	// Registerer receives the metrics; nil keeps them unregistered (tests).
	Registerer prometheus.Registerer
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
}

// Tracker combines load-watcher's usage with the pods bound since it was
// sampled, and reports when usage is unavailable.
type Tracker struct {
	source  Source
	pending *PendingPods
	metrics *Metrics
	events  *eventOnce
	now     func() time.Time
	attach  sync.Once
	// siblings estimates pods by their running siblings; nil when the
	// source does not tell what pods use.
	siblings *podusage.Siblings

	tablesMu sync.Mutex
	// list is the scheduler snapshot's node list the tables index.
	list *nodeList
	// tables are the tables of the newest snapshot on list (see Table).
	tables []*Table

	wakeOnce sync.Once
	wakeMu   sync.Mutex
	// waiters keep the pods plugins rejected for their nodes' usage.
	waiters []*Waiter
}

// NewTracker returns a Tracker reading usage from source.
func NewTracker(source Source, o Options) *Tracker {
	if o.Now == nil {
		o.Now = time.Now
	}
	t := &Tracker{
		source:  source,
		pending: NewPendingPods(o.Expiry, o.Now),
		metrics: NewMetrics(o.Registerer),
		events:  newEventOnce(o.Now),
		now:     o.Now,
	}
	t.pending.OnChange(t.pendingChanged)
	return t
}

// Now reads the tracker's clock.
func (t *Tracker) Now() time.Time { return t.now() }

// Metrics returns the tracker's counters.
func (t *Tracker) Metrics() *Metrics { return t.metrics }

// Pending returns the anti-herding cache.
func (t *Tracker) Pending() *PendingPods { return t.pending }

// Snapshot returns the newest usage snapshot, nil when there is none.
func (t *Tracker) Snapshot() *usage.Snapshot {
	if t.source == nil {
		return nil
	}
	return t.source.Snapshot()
}

// Attach feeds the anti-herding cache from the scheduler's pod informer, and
// finds pods' siblings through it; plugin names the caller for the error of
// a nil tracker. All profiles share one informer factory, so only the first
// call registers.
func (t *Tracker) Attach(plugin string, h fwk.Handle) error {
	if t == nil {
		return fmt.Errorf("%s needs a usage tracker", plugin)
	}
	t.metrics.startPlugin(plugin)
	var err error
	t.attach.Do(func() {
		if h == nil || h.SharedInformerFactory() == nil {
			return
		}
		pods := h.SharedInformerFactory().Core().V1().Pods()
		if pu, ok := t.source.(podusage.Source); ok {
			t.siblings = podusage.NewSiblings(pu, pods.Lister(), podusage.SiblingsOptions{Now: t.now})
		}
		_, err = pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    t.onPod,
			UpdateFunc: func(_, obj any) { t.onPod(obj) },
			DeleteFunc: t.onPodDelete,
		})
	})
	if err != nil {
		return fmt.Errorf("watching pods for recently bound pods: %w", err)
	}
	return nil
}

func (t *Tracker) onPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	t.pending.Observe(pod)
	if pod.Spec.NodeName != "" {
		t.events.forget(pod.UID)
		t.forgetWaiting(pod.UID)
	}
}

func (t *Tracker) onPodDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		t.pending.Forget(pod.UID)
		t.events.forget(pod.UID)
		t.forgetWaiting(pod.UID)
	}
}

// forgetWaiting drops a pod that was placed or deleted from every waiter.
func (t *Tracker) forgetWaiting(uid types.UID) {
	t.wakeMu.Lock()
	waiters := t.waiters
	t.wakeMu.Unlock()
	for _, w := range waiters {
		w.Forget(uid)
	}
}

// EstimatePod returns the usage pod is expected to add to a node: the
// measured usage of its running siblings when known (see podusage.Siblings),
// else the estimate from its requests with opts. It counts which one plugin
// used.
func (t *Tracker) EstimatePod(ctx context.Context, plugin string, pod *v1.Pod, opts loadmodel.EstimateOptions) loadmodel.Amount {
	if a, ok := t.siblings.Estimate(ctx, pod); ok {
		t.metrics.Estimates.WithLabelValues(plugin, EstimateSiblings).Inc()
		return a
	}
	t.metrics.Estimates.WithLabelValues(plugin, EstimateRequests).Inc()
	return loadmodel.EstimatePod(pod, opts)
}

// Reserve counts pod on node from the moment the scheduler picks it, by its
// siblings' usage when known. A pod already counted on node is left as it is.
func (t *Tracker) Reserve(ctx context.Context, pod *v1.Pod, node string) {
	// Every plugin of a profile that counts pending pods reserves the pod;
	// the first one records it.
	if t.pending.NodeOf(pod.UID) == node {
		return
	}
	var measured *loadmodel.Amount
	if a, ok := t.siblings.Estimate(ctx, pod); ok {
		measured = &a
	}
	t.pending.Assume(pod, node, measured)
}

// Unreserve forgets a pod whose placement was abandoned.
func (t *Tracker) Unreserve(pod *v1.Pod) { t.pending.Forget(pod.UID) }

// Lookup returns the usage of node in snap for window, or why it cannot be
// used. Every resource in resources must have samples and valid averages.
func Lookup(snap *usage.Snapshot, node string, window usage.Window, resources ...usage.Resource) (usage.NodeUsage, Cause) {
	if snap == nil {
		return usage.NodeUsage{}, CauseMissing
	}
	nu, ok := snap.Nodes[node]
	if !ok {
		return nu, CauseMissing
	}
	if nu.Invalid != "" {
		return nu, CauseInvalid
	}
	if nu.Stale {
		return nu, CauseStale
	}
	for _, r := range resources {
		s, ok := nu.Get(window, r)
		if !ok {
			return nu, CauseMissing
		}
		if !loadmodel.Valid(s.Avg) || !loadmodel.Valid(s.Std) || !loadmodel.Valid(s.P95) {
			return nu, CauseInvalid
		}
	}
	return nu, CauseNone
}

// Unavailable is what a plugin found out about nodes without usable data
// while placing one pod.
type Unavailable struct {
	// Nodes counts the nodes per cause.
	Nodes map[Cause]int
	// Example names one node per cause, for the message.
	Example map[Cause]string
}

// Add records that node has no usable usage for cause.
func (u *Unavailable) Add(node string, cause Cause) {
	if u.Nodes == nil {
		u.Nodes, u.Example = map[Cause]int{}, map[Cause]string{}
	}
	u.Nodes[cause]++
	if _, ok := u.Example[cause]; !ok {
		u.Example[cause] = node
	}
}

// Report accounts for nodes whose usage plugin could not use for pod: it
// counts them in the metric, logs at V(2) and emits one event per pod and
// cause through the framework's recorder. Plugins that ask about every node
// report through their Table (Table.Report), which logs once per snapshot.
func (t *Tracker) Report(ctx context.Context, h fwk.Handle, plugin string, pod *v1.Pod, u Unavailable) {
	t.report(ctx, h, plugin, pod, u, true)
}

func (t *Tracker) report(ctx context.Context, h fwk.Handle, plugin string, pod *v1.Pod, u Unavailable, log bool) {
	if len(u.Nodes) == 0 {
		return
	}
	logger := klog.FromContext(ctx)
	for _, cause := range []Cause{CauseMissing, CauseStale, CauseInvalid} {
		n, ok := u.Nodes[cause]
		if !ok {
			continue
		}
		t.metrics.Unavailable.WithLabelValues(plugin, string(cause)).Add(float64(n))
		if log {
			logger.V(2).Info("Real usage unavailable, placing by requests on these nodes",
				"plugin", plugin, "pod", klog.KObj(pod), "cause", cause, "nodes", n, "example", u.Example[cause])
		}
		if h == nil || h.EventRecorder() == nil || !t.events.first(pod.UID, cause) {
			continue
		}
		h.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, string(cause), "Scheduling",
			"%s: %s for %d node(s) (e.g. %s); placing by requests there", plugin, describe(cause), n, u.Example[cause])
	}
}

func describe(c Cause) string {
	switch c {
	case CauseStale:
		return "usage from load-watcher is stale"
	case CauseInvalid:
		return "usage from load-watcher is not a valid number or was refused"
	}
	return "no usage from load-watcher"
}
