package balance

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"
)

// Deps are what a balance plugin needs from the binary that hosts it.
type Deps struct {
	// Usage supplies real node usage. Required.
	Usage SnapshotSource
	// Model is the scheduler's load model. Required.
	Model LoadModel
	// Metrics receives the plugin's metrics; nil records none.
	Metrics *Metrics
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	// Store keeps memory across cycles; nil gives every plugin instance its
	// own. The descheduler builds plugins once per process, so instance
	// memory lasts as long as the process.
	Store *Store
	// PodUsage reports what pods really use; nil reads metrics.k8s.io
	// through the descheduler's client, one list per cycle.
	PodUsage podusage.Source
	// Growth tells pods whose memory keeps growing; nil, with PodUsage
	// nil too, fits the lists PodUsage makes.
	Growth GrowthSource
	// Events records the warnings about growing pods; nil records none.
	Events events.EventRecorder
	// Persist keeps the Store's moves in the cluster (Recall, Keep); nil
	// keeps them in this process only.
	Persist Persistence
	// Fit judges whether the scheduler would place a pod on a destination
	// by its own filters (descheduler/pkg/schedulerfit); nil judges with
	// the upstream descheduler's NodeFit.
	Fit Fit
}

// PodAmount is what pod is expected to free on its node and add to its
// destination: its measured usage, or the load model's estimate from its
// requests when the metrics API has none (counted by plugin as
// pod_usage_estimated_total).
func (d Deps) PodAmount(ctx context.Context, plugin string, pod *v1.Pod) loadmodel.Amount {
	a, measured := d.usageOf(ctx, pod)
	if !measured {
		d.Metrics.PodUsageEstimated.WithLabelValues(plugin).Inc()
	}
	return a
}

// Measured reports whether the metrics API has what pod uses, so that its
// usage is known even before its node's window shows it.
func (d Deps) Measured(ctx context.Context, pod *v1.Pod) bool {
	_, measured := d.usageOf(ctx, pod)
	return measured
}

// usageOf is what pod uses: its measured usage when PodUsage has it
// (measured), else the load model's estimate from its requests.
func (d Deps) usageOf(ctx context.Context, pod *v1.Pod) (a loadmodel.Amount, measured bool) {
	if d.PodUsage != nil {
		if a, ok := d.PodUsage.PodUsage(ctx, pod); ok {
			return a, true
		}
	}
	return d.Model.EstimatePod(pod), false
}

// Complete checks the dependencies plugin needs and fills the optional ones
// with their defaults; pod usage comes from metrics.k8s.io through handle's
// client unless set. Both balance plugins build from it.
func (d Deps) Complete(plugin string, handle frameworktypes.Handle) (Deps, error) {
	if d.Usage == nil || d.Model == nil {
		return d, fmt.Errorf("%s needs a usage source and a load model", plugin)
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics()
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Store == nil {
		d.Store = NewStore()
	}
	if d.PodUsage == nil && handle != nil && handle.ClientSet() != nil {
		// One list of PodMetrics per cycle, not a request per pod: a cycle
		// asks about every candidate, and the client's rate limit would
		// make a large cluster's cycle take minutes.
		listing := &podusage.Listing{Client: handle.ClientSet().CoreV1().RESTClient(), Clock: d.Clock, Trend: &podusage.Trend{}}
		d.PodUsage = listing
		if d.Growth == nil {
			d.Growth = listing.Trend
		}
	}
	return d, nil
}

// FollowReplacements reads where the replacements of remembered moves run
// (Store.Follow), so the nodes they really landed on are guarded too, and
// records under plugin those that landed back on their source node, and
// counts those that landed on the node their move planned and elsewhere; it
// also feeds the Store's Bounced, measures what the replacements use
// (Store.MeasureReplacements), and notes the moved pods gone from their
// source (Store.NoteGone). Callers hold the Store's lock.
func (d Deps) FollowReplacements(ctx context.Context, logger klog.Logger, handle frameworktypes.Handle, plugin string, nodes []*v1.Node) {
	podsOn := func(node string) []*v1.Pod {
		pods, err := handle.GetPodsAssignedToNodeFunc()(node, nil)
		if err != nil {
			logger.Error(err, "Listing pods to follow moved pods' replacements", "node", node)
		}
		return pods
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
		// Every node has its series, at zero until a pod bounces there or
		// is moved off it by a rollout.
		d.Metrics.PingPong.WithLabelValues(plugin, n.Name)
		d.Metrics.SurgeMoves.WithLabelValues(plugin, n.Name)
	}
	followed := d.Store.Follow(names, podsOn)
	byName := make(map[string]*v1.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	d.Store.MeasureReplacements(func(node string, uid types.UID) (NodeLoad, bool) {
		n := byName[node]
		if n == nil {
			return nil, false
		}
		for _, pod := range podsOn(node) {
			if pod.UID == uid {
				if a, measured := d.usageOf(ctx, pod); measured {
					return d.Model.Share(a, n), true
				}
				return nil, false
			}
		}
		return nil, false
	})
	d.Store.NoteGone(d.Clock.Now(), podsOn)
	for node, n := range followed.Back {
		logger.Info("Replacement of a moved pod landed back on its source node", "node", node, "pods", n)
		d.Metrics.PingPong.WithLabelValues(plugin, node).Add(float64(n))
	}
	if followed.Elsewhere > 0 {
		logger.V(2).Info("Replacements of moved pods landed elsewhere than planned", "pods", followed.Elsewhere, "asPlanned", followed.AsPlanned)
	}
	d.Metrics.Landed.WithLabelValues(LandedAsPlanned).Add(float64(followed.AsPlanned))
	d.Metrics.Landed.WithLabelValues(LandedElsewhere).Add(float64(followed.Elsewhere))
}

// WorkloadPods lists the pods of w in pod's namespace, bound or not, from
// the API server: the informer may not have the pods a controller made a
// moment ago. Taken just before pod is moved, none of them is its
// replacement (Store.Existed). Nil without a client, or when the listing
// fails: the replacement is then told by its creation stamp.
func WorkloadPods(ctx context.Context, handle frameworktypes.Handle, pod *v1.Pod, w Workload) sets.Set[types.UID] {
	if handle == nil || handle.ClientSet() == nil {
		return nil
	}
	list, err := handle.ClientSet().CoreV1().Pods(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Listing the pods of a workload before moving one; its replacement will be told by its creation stamp",
			"workload", w, "err", err)
		return nil
	}
	out := sets.New[types.UID]()
	for i := range list.Items {
		if pw, ok := WorkloadOf(&list.Items[i]); ok && pw == w {
			out.Insert(list.Items[i].UID)
		}
	}
	return out
}
