package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// settle brings the cluster to rest after a change: it waits for the
// controllers (every workload has its replicas, nothing is terminating),
// lets the scheduler place every pending pod it can (the stack's scheduler
// is stepped: it places nothing between steps), waits for the bound pods to
// run, and then observes the pods, as the end of a descheduling cycle when
// evicting. Nothing here waits for a length of real time: a busy machine
// takes longer, not another path.
func (e *engine) settle(ctx context.Context, evicting bool) error {
	if err := e.waitQuiet(ctx, "the controllers to create and delete the pods they own", false); err != nil {
		return err
	}
	if _, err := e.Schedule(ctx); err != nil {
		return err
	}
	if err := e.waitQuiet(ctx, "the bound pods to run", true); err != nil {
		return err
	}
	pods, err := e.CurrentPods(ctx)
	if err != nil {
		return err
	}
	e.rec.Observe(pods, e.clock.Now().Sub(e.Started()), evicting)
	return nil
}

// waitQuiet waits, for at most SettleTimeout, until every scenario workload
// has its pods (Expected) and nothing is terminating; with running, also until
// every bound pod runs.
func (e *engine) waitQuiet(ctx context.Context, what string, running bool) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, e.opts.SettleTimeout, true, func(ctx context.Context) (bool, error) {
		msg := e.unquiet(ctx, running)
		if ctx.Err() == nil {
			last = msg
		}
		return msg == "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s at %s (last: %s): %w", what, e.clock.Now().Sub(e.Started()), last, err)
	}
	return nil
}

// unquiet says what the cluster is still doing: a pod terminating, one
// bound but not running, a workload without the pods it should have; ""
// when it is quiet.
func (e *engine) unquiet(ctx context.Context, running bool) string {
	pods, err := e.Cluster().Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel})
	if err != nil {
		return fmt.Sprintf("listing pods: %v", err)
	}
	count := map[string]int32{}
	t := e.clock.Now().Sub(e.Started())
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			if e.Model().Down(p.Spec.NodeName, t) {
				// Deleted while its node is off (a scale-down, an
				// eviction): nothing confirms it until the node is back,
				// as in a cluster, and it counts for no workload.
				continue
			}
			return fmt.Sprintf("pod %s/%s is terminating", p.Namespace, p.Name)
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			// A Job's pod whose run is over: it stays, using nothing.
			continue
		}
		if running && p.Spec.NodeName != "" && p.Status.Phase != corev1.PodRunning {
			return fmt.Sprintf("pod %s/%s on %s is %s", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase)
		}
		count[p.Labels[model.WorkloadLabel]]++
	}
	want, err := e.Expected(ctx)
	if err != nil {
		return fmt.Sprintf("counting the pods wanted: %v", err)
	}
	for _, w := range slices.Sorted(maps.Keys(want)) {
		if count[w] != want[w] {
			return fmt.Sprintf("%s has %d pods of %d", w, count[w], want[w])
		}
	}
	return ""
}
