package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// currentPods returns the scenario's pods that are not terminating, with the
// node each is bound to ("" while pending).
func (e *engine) currentPods(ctx context.Context) (map[types.UID]placedPod, error) {
	pods, err := e.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: workloadLabel})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	out := make(map[types.UID]placedPod, len(pods.Items))
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out[p.UID] = placedPod{workload: p.Labels[workloadLabel], node: p.Spec.NodeName}
		}
	}
	return out, nil
}

// placement counts the pods of each workload on each node, and the pending
// pods.
func (e *engine) placement(ctx context.Context) (map[string]map[string]int, int, error) {
	pods, err := e.currentPods(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := map[string]map[string]int{}
	pending := 0
	for _, p := range pods {
		if p.node == "" {
			pending++
			continue
		}
		if out[p.node] == nil {
			out[p.node] = map[string]int{}
		}
		out[p.node][p.workload]++
	}
	return out, pending, nil
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
		if e.model.hogged(p.node, t) {
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

// record notes every present node's pods, requests and real usage at t.
func (e *engine) record(ctx context.Context, t time.Duration, step int64) error {
	nodes, err := e.c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	placement, pending, err := e.placement(ctx)
	if err != nil {
		return err
	}
	rec := Step{At: t, Pending: pending}
	for _, n := range nodes.Items {
		cpuAlloc := float64(n.Status.Allocatable.Cpu().MilliValue()) / 1000
		memAlloc := float64(n.Status.Allocatable.Memory().Value())
		u := e.model.NodeUsage(n.Name, placement[n.Name], t, step)
		s := NodeStep{Node: n.Name, Cordoned: n.Spec.Unschedulable, Workloads: placement[n.Name],
			CPU: 100 * u.CPU / cpuAlloc, Memory: 100 * u.Memory / memAlloc}
		for w, count := range placement[n.Name] {
			s.Pods += count
			req := e.model.workloads[w].Requests
			s.CPURequests += 100 * float64(count) * req.CPU.AsApproximateFloat64() / cpuAlloc
			s.MemoryRequests += 100 * float64(count) * req.Memory.AsApproximateFloat64() / memAlloc
		}
		rec.Nodes = append(rec.Nodes, s)
	}
	e.result.Steps = append(e.result.Steps, rec)
	return nil
}
