package cluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/objects"
)

// TestSteppedSchedulerPlacesPodsOnlyWhenTold creates pods, lets the
// controllers and the scheduler see them, and checks that none is bound
// until Schedule runs, which binds every pod that fits and reports how many.
func TestSteppedSchedulerPlacesPodsOnlyWhenTold(t *testing.T) {
	c, ctx := startCluster(t)
	s, err := c.StartSteppedScheduler(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// 3.5 CPU: room for three pods of 1 CPU request (the fourth waits).
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-a", CPU: "3500m", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	deploy := objects.MakeDeployment("web").Replicas(4).Requests("1", "64Mi").Obj()
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Between steps the gate keeps every pod out, however long the
	// scheduler has: the pods are created, and each is found waiting with
	// the reason the gate gives.
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 4, nil
	})
	if err != nil {
		t.Fatalf("the ReplicaSet never created 4 pods: %v", err)
	}
	time.Sleep(2 * time.Second) // what an unstepped scheduler needs to bind them all, many times over
	if bound := boundPods(t, c); bound != 0 {
		t.Fatalf("%d pods bound before Schedule", bound)
	}

	n, err := s.Schedule(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || boundPods(t, c) != 3 {
		t.Errorf("Schedule bound %d pods (%d in the API), want 3: room for three 1-CPU pods on 3.5 CPU", n, boundPods(t, c))
	}
	// Nothing changed: a second step binds nothing, and the fourth pod is
	// still pending.
	if n, err := s.Schedule(ctx); err != nil || n != 0 {
		t.Errorf("second Schedule = %d, %v; want 0 pods bound", n, err)
	}
	// A node joins: the next step places the fourth pod.
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-b", CPU: "2", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Schedule(ctx); err != nil || n != 1 {
		t.Errorf("Schedule after a node joined = %d, %v; want the fourth pod bound", n, err)
	}
}

func boundPods(t *testing.T, c *cluster.Cluster) int {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// A rank set by the caller decides which of two pending pods tries first,
// whatever order they reached the queue in: with room for one of them,
// "late", created second but ranked first, takes the node.
func TestSteppedSchedulerTriesPodsInRankOrder(t *testing.T) {
	c, ctx := startCluster(t)
	s, err := c.StartSteppedScheduler(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.SetRank(func(p *corev1.Pod) int {
		if p.Labels["app"] == "late" {
			return 0
		}
		return 1
	})
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-a", CPU: "1500m", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"early", "late"} {
		deploy := objects.MakeDeployment(name).Replicas(1).Requests("1", "64Mi").Obj()
		if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
			return err == nil && len(pods.Items) == 1, nil
		})
		if err != nil {
			t.Fatalf("no pod of %s: %v", name, err)
		}
	}
	if n, err := s.Schedule(ctx); err != nil || n != 1 {
		t.Fatalf("Schedule = %d, %v; want one pod bound", n, err)
	}
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=late"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != "node-a" {
		t.Errorf("late's pod is on %q, want node-a: it is ranked first", pods.Items[0].Spec.NodeName)
	}
}
