package balance

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/api"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// Plugin is what every balance plugin holds besides its own args, built
// once by NewPlugin so the two plugins cannot be wired differently.
type Plugin struct {
	Logger klog.Logger
	Handle frameworktypes.Handle
	Deps   Deps
	// PodFilter accepts the pods the descheduler's evictor and the args'
	// namespaces let the plugin move.
	PodFilter podutil.FilterFunc
	// PlacedByBallast accepts the pods of the args' SchedulerNames.
	PlacedByBallast podutil.FilterFunc
	// GrowthPerMinute is the args' memoryGrowthPerMinute in bytes: a pod
	// whose memory grows faster is not moved (Growing).
	GrowthPerMinute float64
	// Volumes reads the claims and volumes of candidates, to leave those
	// their volumes keep on their node (WithoutPinned); nil reads none.
	Volumes Volumes
}

// NewPlugin completes deps for the plugin called name and builds its
// filters from the settings every balance plugin takes.
func NewPlugin(ctx context.Context, name string, handle frameworktypes.Handle, deps Deps, args *EvictionArgs) (Plugin, error) {
	deps, err := deps.Complete(name, handle)
	if err != nil {
		return Plugin{}, err
	}
	podFilter, err := NewPodFilter(handle, args.Namespaces, name)
	if err != nil {
		return Plugin{}, err
	}
	deps.Metrics.startPlugin(name)
	var growth float64
	if args.MemoryGrowthPerMinute != nil {
		growth = args.MemoryGrowthPerMinute.AsApproximateFloat64()
	}
	var vols Volumes
	if f := handle.SharedInformerFactory(); f != nil {
		vols = listedVolumes{claims: f.Core().V1().PersistentVolumeClaims().Lister(), volumes: f.Core().V1().PersistentVolumes().Lister()}
	}
	return Plugin{
		Volumes:         vols,
		Logger:          klog.FromContext(ctx).WithValues("plugin", name),
		Handle:          handle,
		Deps:            deps,
		PodFilter:       podFilter,
		PlacedByBallast: PlacedBy(args.SchedulerNames),
		GrowthPerMinute: growth,
	}, nil
}

// Fit is how the plugin judges whether the scheduler would place a pod on a
// node: Deps.Fit, or the upstream NodeFit.
func (p *Plugin) Fit() Fit {
	if p.Deps.Fit != nil {
		return p.Deps.Fit
	}
	return NodeFit(p.Handle.GetPodsAssignedToNodeFunc())
}

// PodsOn lists the pods on node that are still there as far as any balance
// plugin knows: neither terminating nor evicted by a remembered move (the
// descheduler's informer may list a pod evicted moments ago, even earlier
// in the same cycle by another plugin); filter, when not nil, must accept
// them too. Every count and every candidate of a balance plugin comes from
// it, so that no plugin counts a moved pod twice or evicts it again.
// Callers hold the Store's lock.
func (p *Plugin) PodsOn(node string, filter podutil.FilterFunc) ([]*v1.Pod, error) {
	return podutil.ListPodsOnANode(node, p.Handle.GetPodsAssignedToNodeFunc(), func(pod *v1.Pod) bool {
		return pod.DeletionTimestamp == nil && !p.Deps.Store.Evicted(pod.UID) && (filter == nil || filter(pod))
	})
}

// Unsampled is what the pods running on node add to its usage that its
// window, sampled at sampled, does not show yet: each pod's share times the
// part of the window it has not run for (loadmodel.Unsampled), as the
// scheduler adds the pods bound since its sample to a node's usage. A
// destination judged without them may be one the scheduler rejects. The
// replacements of remembered moves are left out: InFlight counts them.
// Callers hold the Store's lock.
func (p *Plugin) Unsampled(ctx context.Context, node *v1.Node, sampled time.Time, window time.Duration) NodeLoad {
	pods, err := p.PodsOn(node.Name, nil)
	if err != nil {
		p.Logger.Error(err, "Listing pods to count those the usage does not show yet", "node", klog.KObj(node))
		return nil
	}
	out := NodeLoad{}
	for _, pod := range pods {
		left := loadmodel.Unsampled(sampled.Sub(loadmodel.UsageSince(pod)), window)
		if left <= 0 || p.Deps.Store.Replaces(pod.UID) {
			continue
		}
		a, _ := p.Deps.usageOf(ctx, pod)
		for r, v := range p.Deps.Model.Share(a, node) {
			out[r] += left * v
		}
	}
	return out
}

// NewPodFilter returns the filter of the pods plugin may evict: those the
// profile's evictor accepts, in the namespaces the args allow, that do not
// run to completion (RunsToCompletion).
func NewPodFilter(handle frameworktypes.Handle, namespaces *api.Namespaces, plugin string) (podutil.FilterFunc, error) {
	var include, exclude sets.Set[string]
	if namespaces != nil {
		include, exclude = sets.New(namespaces.Include...), sets.New(namespaces.Exclude...)
	}
	evictable := handle.Evictor().Filter
	filter, err := podutil.NewOptions().
		WithFilter(func(pod *v1.Pod) bool { return !RunsToCompletion(pod) && evictable(pod) }).
		WithNamespaces(include).
		WithoutNamespaces(exclude).
		BuildFilterFunc()
	if err != nil {
		return nil, fmt.Errorf("building the pod filter of %s: %w", plugin, err)
	}
	return filter, nil
}

// RunsToCompletion reports whether pod ends by itself (a Job's pod: its
// restartPolicy is OnFailure or Never): such a pod is never moved. Its
// load leaves with it, and a replacement would run its work again from
// the start, or, for a Job whose backoff limit counts evictions, not at
// all.
func RunsToCompletion(pod *v1.Pod) bool {
	return pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure || pod.Spec.RestartPolicy == v1.RestartPolicyNever
}

// PlacedBy returns a filter accepting the pods whose spec.schedulerName is
// one of names: the pods those schedulers place again once evicted. A pod
// without a schedulerName counts as default-scheduler, as the API server
// names it.
func PlacedBy(names []string) podutil.FilterFunc {
	set := sets.New(names...)
	return func(pod *v1.Pod) bool {
		name := pod.Spec.SchedulerName
		if name == "" {
			name = v1.DefaultSchedulerName
		}
		return set.Has(name)
	}
}
