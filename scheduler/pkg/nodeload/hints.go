package nodeload

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// The queueing hints of the usage plugins' cluster events: kube-scheduler
// asks them, for each pod a plugin rejected, whether an event may make the
// pod schedulable, and leaves the pod where it waits when the answer is
// QueueSkip.

// PodEvents are the pod events a usage plugin's rejection may depend on:
// a pod deleted, or shrunk in place.
var PodEvents = fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete | fwk.UpdatePodScaleDown}

// NodeEvents are the node events a usage plugin's rejection may depend on:
// a node added, or its allocatable changed. Taints and labels do not change
// what the plugins judge (with queueing hints, kube-scheduler needs no
// Update registered for a Node/Add it might have missed).
var NodeEvents = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}

// AfterPodEvent is the hint of PodEvents: a pod that ran on a node (or was
// assumed there) and is deleted takes its usage and its pending estimate
// with it, and one that shrinks uses less; a pod that never had a node
// changes nothing.
func AfterPodEvent(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	original, modified, err := schedutil.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if modified == nil {
		if original.Spec.NodeName == "" {
			logger.V(5).Info("A pod without a node was deleted, which frees no usage", "pod", klog.KObj(pod), "deletedPod", klog.KObj(original))
			return fwk.QueueSkip, nil
		}
		logger.V(5).Info("A pod on a node was deleted, which may make room", "pod", klog.KObj(pod), "deletedPod", klog.KObj(original))
		return fwk.Queue, nil
	}
	if modified.UID == pod.UID {
		return fwk.Queue, nil // the pod itself asks for less
	}
	if modified.Spec.NodeName == "" || !shrank(loadmodel.PodRequests(original), loadmodel.PodRequests(modified)) {
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("A pod on a node was scaled down, which may make room", "pod", klog.KObj(pod), "modifiedPod", klog.KObj(modified))
	return fwk.Queue, nil
}

// AfterNodeEvent is the hint of NodeEvents: a new node has no usage yet and
// so passes, and a node whose allocatable grew holds the same usage as a
// smaller share; a node whose CPU and memory did not grow changes nothing.
func AfterNodeEvent(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	original, modified, err := schedutil.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if original == nil {
		logger.V(5).Info("A node was added", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.Queue, nil
	}
	if !grew(allocatable(original), allocatable(modified)) {
		logger.V(5).Info("A node's allocatable CPU and memory did not grow", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("A node's allocatable grew", "pod", klog.KObj(pod), "node", klog.KObj(modified))
	return fwk.Queue, nil
}

func allocatable(n *v1.Node) loadmodel.Amount {
	return loadmodel.Amount{MilliCPU: n.Status.Allocatable.Cpu().MilliValue(), Memory: n.Status.Allocatable.Memory().Value()}
}

// grew reports whether b has more of either resource than a.
func grew(a, b loadmodel.Amount) bool { return b.MilliCPU > a.MilliCPU || b.Memory > a.Memory }

// shrank reports whether b has less of either resource than a.
func shrank(a, b loadmodel.Amount) bool { return b.MilliCPU < a.MilliCPU || b.Memory < a.Memory }
