// Package podcountbalance is the PodCountBalance plugin: it prefers the node
// with the most free pod slots (allocatable pods minus pods on the node), so
// a newly added node receives pods instead of staying empty.
//
// LoadAware scores the same as a term of its own score (its args'
// podCountBalance) with Free and Score, which is the cheaper way to run
// both: one plugin, one pass over the nodes. The plugin stays for
// configurations that name it.
package podcountbalance

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in scheduler configurations.
const Name = "PodCountBalance"

var (
	_ fwk.ScorePlugin     = &PodCountBalance{}
	_ fwk.ScoreExtensions = &PodCountBalance{}
	_ fwk.SignPlugin      = &PodCountBalance{}
)

// PodCountBalance scores nodes by free pod slots.
type PodCountBalance struct{}

// New builds the plugin; it takes no args.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return &PodCountBalance{}, nil
}

// Name returns the plugin's name.
func (pl *PodCountBalance) Name() string { return Name }

// SignPod lets kube-scheduler batch pods (fwk.SignPlugin): the score does
// not depend on the pod at all. Placing a pod changes the free slots of the
// chosen node only; when that node had the most, the other nodes' scores
// grow in the same proportion (NormalizeScore), which leaves their order
// among themselves unchanged.
func (pl *PodCountBalance) SignPod(context.Context, *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}

// Score returns the node's free pod slots, counting pods the scheduler has
// assumed there:
//
//	free = allocatable pods − pods on the node
func (pl *PodCountBalance) Score(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	free := Free(nodeInfo)
	// Checked first: the arguments alone would cost allocations on every
	// node of every pod.
	if logger := klog.FromContext(ctx).V(4); logger.Enabled() {
		logger.Info("Free pod slots", "plugin", Name, "pod", klog.KObj(pod), "node", nodeInfo.Node().Name, "free", free)
	}
	return free, nil
}

// ScoreExtensions normalises the free slots.
func (pl *PodCountBalance) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore scales free slots to the framework's range against the
// node with the most:
//
//	score = 100 × free / max(free over all nodes)
func (pl *PodCountBalance) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	var most int64
	for _, s := range scores {
		most = max(most, s.Score)
	}
	for i := range scores {
		if most == 0 {
			scores[i].Score = 0
			continue
		}
		scores[i].Score = fwk.MaxNodeScore * scores[i].Score / most
	}
	return nil
}

// Free returns the node's free pod slots, counting pods the scheduler has
// assumed there:
//
//	free = max(allocatable pods − pods on the node, 0)
func Free(nodeInfo fwk.NodeInfo) int64 {
	return max(int64(nodeInfo.GetAllocatable().GetAllowedPodNumber()-len(nodeInfo.GetPods())), 0)
}

// MostFree returns the most free pod slots of nodes.
func MostFree(nodes []fwk.NodeInfo) int64 {
	var most int64
	for _, n := range nodes {
		most = max(most, Free(n))
	}
	return most
}

// Score scales free slots against the most any node has, as NormalizeScore
// does, without rounding:
//
//	score = 100 × free / most      (0 when no node has a free slot)
func Score(free, most int64) float64 {
	if most <= 0 {
		return 0
	}
	return float64(fwk.MaxNodeScore) * float64(free) / float64(most)
}
