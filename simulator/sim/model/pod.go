package model

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
)

// WorkloadLabel marks every pod with the scenario workload it belongs to.
const WorkloadLabel = "sim.ballast-sched.io/workload"

// Pod is a pod that is not terminating: the scenario workload it belongs to
// ("" for a pod from elsewhere), the node it is bound to ("" while pending)
// and its requests, which stand for the usage of a pod from elsewhere.
type Pod struct {
	Workload, Node string
	Requests       Amount
	// Key names the pod, Container its first container.
	Key       types.NamespacedName
	Container string
}

// PodOf is p as the model sees it; false for a pod that is terminating or
// finished, which uses nothing.
func PodOf(p *corev1.Pod) (Pod, bool) {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return Pod{}, false
	}
	out := Pod{Workload: p.Labels[WorkloadLabel], Node: p.Spec.NodeName, Requests: PodRequests(p),
		Key: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
	if len(p.Spec.Containers) > 0 {
		out.Container = p.Spec.Containers[0].Name
	}
	return out, true
}

// PodRequests is what the scheduler counts for p.
func PodRequests(p *corev1.Pod) Amount {
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	return Amount{CPU: float64(r.Cpu().MilliValue()) / 1000, Memory: float64(r.Memory().Value())}
}

// Placement is where the pods are: the scenario's pods counted per node
// and workload, the requests of pods from elsewhere summed per node, and
// the pods not bound yet.
type Placement struct {
	Workloads map[string]map[string]int
	Other     map[string]Amount
	Pending   int
}

// PlacementOf counts pods per node.
func PlacementOf(pods map[types.UID]Pod) Placement {
	out := Placement{Workloads: map[string]map[string]int{}, Other: map[string]Amount{}}
	for _, p := range pods {
		switch {
		case p.Node == "":
			out.Pending++
		case p.Workload == "":
			out.Other[p.Node] = out.Other[p.Node].Add(p.Requests)
		default:
			if out.Workloads[p.Node] == nil {
				out.Workloads[p.Node] = map[string]int{}
			}
			out.Workloads[p.Node][p.Workload]++
		}
	}
	return out
}
