package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	resourcehelper "k8s.io/component-helpers/resource"
)

// placedPod is a pod that is not terminating: the scenario workload it
// belongs to ("" for a pod from elsewhere), the node it is bound to ("" while
// pending) and its requests, which stand for the usage of a pod from
// elsewhere.
type placedPod struct {
	workload, node string
	requests       Amount
	// key names the pod, container its first container.
	key       types.NamespacedName
	container string
}

// currentPods returns the pods that are not terminating or finished.
func (s *stack) currentPods(ctx context.Context) (map[types.UID]placedPod, error) {
	pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	out := make(map[types.UID]placedPod, len(pods.Items))
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		pp := placedPod{workload: p.Labels[workloadLabel], node: p.Spec.NodeName, requests: podRequests(p),
			key: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
		if len(p.Spec.Containers) > 0 {
			pp.container = p.Spec.Containers[0].Name
		}
		out[p.UID] = pp
	}
	return out, nil
}

// podRequests is what the scheduler counts for p.
func podRequests(p *corev1.Pod) Amount {
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	return Amount{CPU: float64(r.Cpu().MilliValue()) / 1000, Memory: float64(r.Memory().Value())}
}

// podPlacement is where the pods are: the scenario's pods counted per node
// and workload, the requests of pods from elsewhere summed per node, and
// the pods not bound yet.
type podPlacement struct {
	workloads map[string]map[string]int
	other     map[string]Amount
	pending   int
}

func (s *stack) placement(ctx context.Context) (podPlacement, error) {
	pods, err := s.currentPods(ctx)
	if err != nil {
		return podPlacement{}, err
	}
	return placementOf(pods), nil
}

// placementOf counts pods per node.
func placementOf(pods map[types.UID]placedPod) podPlacement {
	out := podPlacement{workloads: map[string]map[string]int{}, other: map[string]Amount{}}
	for _, p := range pods {
		switch {
		case p.node == "":
			out.pending++
		case p.workload == "":
			out.other[p.node] = out.other[p.node].Add(p.requests)
		default:
			if out.workloads[p.node] == nil {
				out.workloads[p.node] = map[string]int{}
			}
			out.workloads[p.node][p.workload]++
		}
	}
	return out
}

// settle waits, for at most SettleTimeout of real time, until every workload
// has its replicas, nothing is terminating and every pod is either running
// or found unschedulable by the scheduler. It then observes the pods, as
// the end of a descheduling cycle when evicting.
func (e *engine) settle(ctx context.Context, evicting bool) error {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, e.opts.SettleTimeout, true, e.settled)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	pods, err := e.currentPods(ctx)
	if err != nil {
		return err
	}
	e.rec.observe(pods, e.clock.Now().Sub(e.start), evicting)
	return nil
}

func (e *engine) settled(ctx context.Context) (bool, error) {
	pods, err := e.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: workloadLabel})
	if err != nil {
		return false, nil
	}
	count := map[string]int32{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			return false, nil
		}
		if p.Spec.NodeName == "" && !unschedulable(&p) || p.Spec.NodeName != "" && p.Status.Phase != corev1.PodRunning {
			return false, nil
		}
		count[p.Labels[workloadLabel]]++
	}
	for w, n := range e.replicas {
		if count[w] != n {
			return false, nil
		}
	}
	return true, nil
}

func unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}
