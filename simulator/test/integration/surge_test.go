package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/readywatch"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

// TestSurgeMovesASingleReplicaDeploymentWithoutDowntime: with
// surgeSingleReplica, the one pod of a Deployment on a hot node moves by a
// rollout — the Deployment controller starts its replacement, the scheduler
// places it on the cool node, and the pod stops only once the replacement
// is Ready — so at no moment does the workload have no Ready pod, and
// nothing is evicted. Without it, the same pod is evicted.
func TestSurgeMovesASingleReplicaDeploymentWithoutDowntime(t *testing.T) {
	for _, surge := range []bool{true, false} {
		name := map[bool]string{true: "surge", false: "eviction"}[surge]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nodeSpec("hot", false), nodeSpec("cool", true))
			e.base["hot"] = [2]float64{10, 90}
			e.deployment("solo", 400)
			e.setUnschedulable("cool", false)
			ready, err := readywatch.Start(e.ctx, e.c.Client, namespace, "app=solo")
			if err != nil {
				t.Fatal(err)
			}
			args := "          surgeSingleReplica: false"
			if surge {
				args = "          surgeSingleReplica: true"
			}
			e.cycle(e.writePolicy(balancePolicy(args)), false)

			pods := e.podsPerNode()
			if pods["cool"] != 1 || pods["hot"] != 0 {
				t.Fatalf("solo's pods per node %v, want its one pod moved to cool", pods)
			}
			evicted, surged := e.evictions("hot-memory", "hot"), e.counter(e.metrics.SurgeMoves, loadawarebalance.PluginName, "hot")
			ready.Stop()
			least, _ := ready.Fewest()
			t.Logf("%s: evictions %v, rollouts %v, fewest Ready pods while it moved %d", name, evicted, surged, least)
			if surge {
				if evicted != 0 || surged != 1 || least < 1 {
					t.Errorf("evictions %v, rollouts %v, fewest Ready pods %d; want 0, 1 and at least 1", evicted, surged, least)
				}
				d, err := e.c.Client.AppsV1().Deployments(namespace).Get(e.ctx, "solo", metav1.GetOptions{})
				if err != nil || d.Spec.Template.Annotations[balance.SurgeAnnotation] == "" {
					t.Errorf("the Deployment's template lacks %s (%v)", balance.SurgeAnnotation, err)
				}
			} else if evicted != 1 || surged != 0 || least != 0 {
				// An eviction stops the pod before its controller even
				// creates the replacement: the downtime a rollout avoids.
				t.Errorf("evictions %v, rollouts %v, fewest Ready pods %d; want 1, 0 and 0", evicted, surged, least)
			}
		})
	}
}

// deployment creates a one-replica Deployment of a pod requesting memMi
// MiB and 100m CPU, placed by ballast-scheduler, with the API server's
// default rolling update, and waits until it runs.
func (e *env) deployment(name string, memMi int64) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(name, memMi),
		},
	}
	if _, err := e.c.Client.AppsV1().Deployments(namespace).Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.waitWorkloadsReady()
}
