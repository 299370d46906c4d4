package sim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// settle waits, for at most SettleTimeout of real time, until every workload
// has its replicas, nothing is terminating and every pod is either running
// or found unschedulable by the scheduler. It then observes the pods, as
// the end of a descheduling cycle when evicting.
func (e *engine) settle(ctx context.Context, evicting bool) error {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, e.opts.SettleTimeout, true, e.settled)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	pods, err := e.CurrentPods(ctx)
	if err != nil {
		return err
	}
	e.rec.Observe(pods, e.clock.Now().Sub(e.Started()), evicting)
	return nil
}

func (e *engine) settled(ctx context.Context) (bool, error) {
	pods, err := e.Cluster().Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel})
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
		count[p.Labels[model.WorkloadLabel]]++
	}
	for w, n := range e.Replicas() {
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
