// Package usageawarefit is the UsageAwareFit plugin, an opt-in replacement
// for the request-based Filter of NodeResourcesFit: it admits a pod on a node
// whose CPU or memory requests are exhausted when the node's real usage
// leaves room, up to a maximum overcommit of its allocatable.
//
// Risks (see docs/scheduler.md): the kubelet still admits pods by requests, so
// pods placed beyond a node's requests are refused by a stock kubelet
// (OutOfcpu / OutOfmemory) unless the node's allocatable is raised to match;
// and memory is not compressible, so a memory overcommit turns a usage spike
// into OOM kills and evictions.
package usageawarefit

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/pluginargs"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// Name is the plugin's name in scheduler configurations.
const Name = "UsageAwareFit"

var (
	_ fwk.PreFilterPlugin   = &UsageAwareFit{}
	_ fwk.FilterPlugin      = &UsageAwareFit{}
	_ fwk.ReservePlugin     = &UsageAwareFit{}
	_ fwk.EnqueueExtensions = &UsageAwareFit{}
	_ fwk.SignPlugin        = &UsageAwareFit{}
)

// UsageAwareFit checks that a pod fits a node, allowing CPU and memory
// requests beyond allocatable when real usage leaves room.
type UsageAwareFit struct {
	handle     fwk.Handle
	tracker    *nodeload.Tracker
	overcommit map[usage.Resource]float64
	maxUsage   map[usage.Resource]float64
	window     usage.Window
	estimate   loadmodel.EstimateOptions
	fitOptions noderesources.ResourceRequestsOptions
}

// NewFactory returns the factory kube-scheduler calls for every profile that
// enables the plugin; all instances share tracker.
func NewFactory(tracker *nodeload.Tracker) frameworkruntime.PluginFactory {
	return nodeload.Factory(tracker, New)
}

// New builds the plugin from its args, defaulting and validating them.
func New(_ context.Context, obj runtime.Object, h fwk.Handle, tracker *nodeload.Tracker) (*UsageAwareFit, error) {
	args, err := pluginargs.Decode(Name, obj, config.SetDefaults_UsageAwareFitArgs, config.ValidateUsageAwareFitArgs)
	if err != nil {
		return nil, err
	}
	if err := tracker.Attach(Name, h); err != nil {
		return nil, err
	}
	return &UsageAwareFit{
		handle:     h,
		tracker:    tracker,
		overcommit: args.MaxOvercommit,
		maxUsage:   args.MaxUsage,
		window:     usage.Window(args.Window.Duration),
		estimate:   args.PodEstimate.Options(),
		fitOptions: noderesources.ResourceRequestsOptions{
			EnablePodLevelResources: utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources),
		},
	}, nil
}

// Name returns the plugin's name.
func (pl *UsageAwareFit) Name() string { return Name }

// SignPod lets kube-scheduler batch pods (fwk.SignPlugin): Filter depends on
// the pod through its requests, as NodeResourcesFit's does, and its usage
// estimate.
func (pl *UsageAwareFit) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{
		{Key: Name + ".v1.Pod.Spec.ContainerRequestsAndOverheads()", Value: resource.PodRequests(pod, resource.PodResourcesOptions{
			SkipPodLevelResources: !pl.fitOptions.EnablePodLevelResources,
		})},
		pl.tracker.SignEstimate(Name, pod, pl.estimate),
	}, nil
}

// PreFilter takes the cycle's usage snapshot and estimates the pod.
func (pl *UsageAwareFit) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	nodeload.WriteCycle(cs, Name, pl.newState(ctx, pod, nodes))
	return nil, nil
}

func (pl *UsageAwareFit) newState(ctx context.Context, pod *v1.Pod, nodes []fwk.NodeInfo) *nodeload.Cycle {
	return pl.tracker.NewCycle(ctx, Name, pod, nodes, pl.window, pl.estimate)
}

// PreFilterExtensions returns nil.
func (pl *UsageAwareFit) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter admits the pod when it fits by requests, as NodeResourcesFit would.
// When only CPU or memory requests are exhausted, it admits the pod if, for
// each of them,
//
//	requested + pod request ≤ allocatable × maxOvercommit
//	p95 usage + pending pods + pod estimate ≤ maxUsage      (percent)
//
// Without fresh usage it falls back to requests and rejects.
func (pl *UsageAwareFit) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	short := noderesources.Fits(pod, nodeInfo, nil, pl.fitOptions)
	if len(short) == 0 {
		return nil
	}
	var over []noderesources.InsufficientResource
	var hard []noderesources.InsufficientResource
	for _, r := range short {
		if ratio := pl.overcommit[usage.Resource(r.ResourceName)]; ratio > 1 {
			over = append(over, r)
		} else {
			hard = append(hard, r)
		}
	}
	if len(hard) > 0 {
		return refuse(short)
	}

	s := pl.state(ctx, cs, pod, nodeInfo)
	node := nodeInfo.Node().Name
	resources := make([]usage.Resource, len(over))
	for i, r := range over {
		resources[i] = usage.Resource(r.ResourceName)
	}
	e := s.Table.Node(nodeInfo, s.NowNano)
	if cause := e.Cause(resources...); cause != nodeload.CauseNone {
		var u nodeload.Unavailable
		u.Add(node, cause)
		pl.tracker.Report(ctx, pl.handle, Name, pod, u)
		return refuse(short)
	}
	current := func(r usage.Resource) (float64, bool) {
		st, ok := e.Stats(r)
		return st.P95, ok
	}
	preds, ok := loadmodel.Predict(nil, resources, current, e.Pending, s.PodEst, nodeload.Allocatable(nodeInfo))
	if !ok {
		return refuse(short)
	}

	var reasons []string
	code := fwk.Unschedulable
	for i, r := range over {
		res := resources[i]
		limit := int64(float64(r.Capacity) * pl.overcommit[res])
		if r.Used+r.Requested > limit {
			reasons = append(reasons, fmt.Sprintf("Insufficient %s: requests %d + %d exceed %g× allocatable %d",
				res, r.Used, r.Requested, pl.overcommit[res], r.Capacity))
			if r.Requested > limit {
				code = fwk.UnschedulableAndUnresolvable
			}
			continue
		}
		ceiling, ok := pl.maxUsage[res]
		if !ok {
			ceiling = 100
		}
		if total := preds[i].Total(); total > ceiling {
			// No '%' in a reason: kube-scheduler formats it into the event.
			reasons = append(reasons, fmt.Sprintf("Insufficient %s: requests exceed allocatable and predicted usage %.1f is above maxUsage %g (percent of allocatable)",
				res, total, ceiling))
		}
	}
	if len(reasons) > 0 {
		return fwk.NewStatus(code, reasons...)
	}
	for _, res := range resources {
		pl.tracker.Metrics().Overcommitted.WithLabelValues(string(res)).Inc()
	}
	klog.FromContext(ctx).V(4).Info("Admitting pod beyond requests", "plugin", Name, "pod", klog.KObj(pod), "node", node,
		"resources", resources)
	return nil
}

func (pl *UsageAwareFit) state(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *nodeload.Cycle {
	if s, ok := nodeload.ReadCycle(cs, Name); ok {
		return s
	}
	return pl.newState(ctx, pod, nodeload.AllNodes(pl.handle, []fwk.NodeInfo{nodeInfo}))
}

// refuse reports the request-based verdict, as NodeResourcesFit does.
func refuse(short []noderesources.InsufficientResource) *fwk.Status {
	code := fwk.Unschedulable
	reasons := make([]string, len(short))
	for i, r := range short {
		reasons[i] = r.Reason
		if r.Unresolvable {
			code = fwk.UnschedulableAndUnresolvable
		}
	}
	return fwk.NewStatus(code, reasons...)
}

// EventsToRegister lists the cluster events after which a rejected pod may
// fit, as for NodeResourcesFit, each with a hint that leaves the pod waiting
// when the event cannot help it: a pod deleted from a node or scaled down, a
// node added or grown.
func (pl *UsageAwareFit) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: nodeload.PodEvents, QueueingHintFn: nodeload.AfterPodEvent},
		{Event: nodeload.NodeEvents, QueueingHintFn: nodeload.AfterNodeEvent},
	}, nil
}

// Reserve counts the pod on its node at once (anti-herding).
func (pl *UsageAwareFit) Reserve(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	pl.tracker.Reserve(ctx, pod, node)
	return nil
}

// Unreserve forgets the pod when its placement is abandoned.
func (pl *UsageAwareFit) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	pl.tracker.Unreserve(pod)
}
