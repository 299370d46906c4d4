package integration

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// batchingProfile is the shipped Ballast profile (LoadAware with its risk
// and pod count terms) in a profile that can use kube-scheduler's
// opportunistic batching: PodTopologySpread without the system's default
// constraints, which it cannot sign pods under.
const batchingProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-batching
  plugins:
    multiPoint:
      enabled:
      - name: LoadAware
        weight: 7
  pluginConfig:
  - name: LoadAware
    args:
      scoringStrategy:
        weight: 5
      variationRisk: {}
      podCountBalance: {}
  - name: PodTopologySpread
    args:
      defaultingType: List
`

// TestBatchingKeepsLoadAwarePlacement: every Ballast plugin signs pods, so a
// profile with them still reuses one scheduling result for the next
// identical pod when the node just chosen is full. Eleven pods of 2.5 CPUs
// on twelve 4-CPU nodes (5–14 % busy, so the pods fit under LoadAware's
// 85 % CPU threshold), one of them at 95 % memory: batching must be used,
// and the hot node must still get nothing (a hinted node goes through every
// filter again).
func TestBatchingKeepsLoadAwarePlacement(t *testing.T) {
	var nodes []string
	for i := 0; i < 12; i++ {
		nodes = append(nodes, fmt.Sprintf("node-%02d", i))
	}
	c, ctx := startCluster(t, nodes...)
	usage := static.New()
	for i, n := range nodes {
		usage.Set(n, 5+float64(i*7%10), 20+float64(i*11%10))
	}
	usage.Set("node-05", 15, 95)

	const pods = 11
	for i := 0; i < pods; i++ {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%02d", i), Namespace: "default", Labels: map[string]string{"app": "big"}},
			Spec: corev1.PodSpec{
				SchedulerName: "ballast-batching",
				Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				}}},
			},
		}
		if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hintsUsed := func() float64 {
		t.Helper()
		v, err := testutil.GetCounterMetricValue(schedmetrics.BatchAttemptStats.WithLabelValues("ballast-batching", schedmetrics.BatchAttemptHintUsed))
		if err != nil {
			t.Fatalf("reading %s: %v", "scheduler_batch_attempts_total", err)
		}
		return v
	}
	schedmetrics.Register() // once per process; the scheduler registers them too
	before := hintsUsed()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=big"})
		if err != nil {
			return
		}
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status != corev1.ConditionTrue {
					t.Logf("%s: %s: %s", p.Name, cond.Reason, cond.Message)
				}
			}
		}
	})
	if _, err := c.StartScheduler(ctx, batchingProfile, plugins.NewRegistry(staticUsage(t, c, usage, time.Second), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}
	perNode := placement(t, ctx, c, "big", pods)
	used := hintsUsed() - before
	t.Logf("placement %v; %v of %d pods placed on a batched hint", perNode, used, pods)
	if used < 1 {
		t.Errorf("no pod was placed on a batched hint: a Ballast plugin turns opportunistic batching off")
	}
	if perNode["node-05"] != 0 {
		t.Errorf("%d pods on node-05 at 95 %% memory, want none", perNode["node-05"])
	}
	for n, k := range perNode {
		if k != 1 {
			t.Errorf("%s got %d pods of 2.5 CPUs, want 1", n, k)
		}
	}
}
