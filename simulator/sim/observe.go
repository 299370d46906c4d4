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
// or found unschedulable by the scheduler. It then notes the pods that
// landed since the last look.
func (e *engine) settle(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, e.opts.SettleTimeout, true, e.settled)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	pods, err := e.currentPods(ctx)
	if err != nil {
		return err
	}
	t := e.clock.Now().Sub(e.start)
	for uid, p := range pods {
		if old, ok := e.pods[uid]; ok && old.node == p.node || p.node == "" {
			continue
		}
		if e.model.hogged(p.node, t, e.sc.Step.Duration) {
			e.result.PlacedOnHog++
		}
	}
	e.pods = pods
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

// nodeState is a node at a step as recorded, and what each of its scenario
// pods uses in percent of the node's allocatable.
type nodeState struct {
	NodeStep
	pods []Amount
}

// nodeStates returns every present node's pods, requests and real usage at
// step (simulated time t), and the number of pods not bound yet.
func (e *engine) nodeStates(ctx context.Context, t time.Duration, step int64) ([]nodeState, int, error) {
	nodes, err := e.c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("listing nodes: %w", err)
	}
	p, err := e.placement(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]nodeState, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		cpuAlloc := float64(n.Status.Allocatable.Cpu().MilliValue()) / 1000
		memAlloc := float64(n.Status.Allocatable.Memory().Value())
		percent := func(a Amount) Amount { return Amount{CPU: 100 * a.CPU / cpuAlloc, Memory: 100 * a.Memory / memAlloc} }
		placed := p.workloads[n.Name]
		total := percent(e.model.baseUsage(n.Name, t).Add(p.other[n.Name]))
		st := nodeState{NodeStep: NodeStep{Node: n.Name, Cordoned: n.Spec.Unschedulable, Workloads: placed}}
		for _, pu := range e.model.PodUsages(n.Name, placed, t, step) {
			share := percent(pu.Amount)
			st.pods = append(st.pods, share)
			total = total.Add(share)
		}
		st.CPU, st.Memory = total.CPU, total.Memory
		for w, count := range placed {
			st.Pods += count
			req := e.model.workloads[w].Requests
			st.CPURequests += 100 * float64(count) * req.CPU.AsApproximateFloat64() / cpuAlloc
			st.MemoryRequests += 100 * float64(count) * req.Memory.AsApproximateFloat64() / memAlloc
		}
		out = append(out, st)
	}
	return out, p.pending, nil
}

// record notes every present node's pods, requests and real usage at t.
func (e *engine) record(ctx context.Context, t time.Duration, step int64) error {
	states, pending, err := e.nodeStates(ctx, t, step)
	if err != nil {
		return err
	}
	rec := Step{At: t, Pending: pending, Nodes: make([]NodeStep, len(states))}
	for i, st := range states {
		rec.Nodes[i] = st.NodeStep
	}
	e.result.Steps = append(e.result.Steps, rec)
	return nil
}
