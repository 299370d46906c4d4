package integration

import (
	"context"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/objects"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
)

// plannedProfile is LoadAware reading the descheduler's moves from the
// ConfigMap the chart names <release>-descheduler-moves.
const plannedProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-planned
  plugins: {multiPoint: {enabled: [{name: LoadAware, weight: 7}]}}
  pluginConfig:
  - name: LoadAware
    args: {plannedMoves: {namespace: default, name: ballast-descheduler-moves}}
`

// TestReplacementLandsWherePlanned: the descheduler keeps a move of web's
// pod from node-1 to node-3 in its ConfigMap, in its own format, and evicts
// the pod. node-1 is the coolest node, where the replacement would go by
// usage alone; the scheduler reads the plan and places it on node-3. A pod
// of another workload still goes to node-1.
func TestReplacementLandsWherePlanned(t *testing.T) {
	c, ctx := startCluster(t, "node-1", "node-2", "node-3")
	usage := static.New()
	usage.Set("node-1", 10, 20)
	usage.Set("node-2", 30, 40)
	usage.Set("node-3", 30, 40)
	cms := c.Client.CoreV1().ConfigMaps("default")
	// Created empty, as the chart creates it.
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ballast-descheduler-moves"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartScheduler(ctx, plannedProfile, plugins.NewRegistry(staticUsage(t, c, usage, time.Second), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}
	deploy := func(name string) {
		t.Helper()
		d := objects.MakeDeployment(name).SchedulerName("ballast-planned").GracePeriod(0).Requests("100m", "128Mi").Obj()
		if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deploy("web")
	if got := placement(t, ctx, c, "web", 1); got["node-1"] != 1 {
		t.Fatalf("web placed %v before any move, want node-1, the coolest", got)
	}
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("web's pods: %v, %v", pods, err)
	}
	evicted := pods.Items[0]
	w, ok := moves.WorkloadOf(&evicted)
	if !ok || w != (moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}) {
		t.Fatalf("web's pod belongs to %v (%v), want Deployment web", w, ok)
	}
	data, err := moves.Encode([]moves.Saved{{Workload: w, Pod: evicted.UID, Source: "node-1", Destination: "node-3", At: time.Now().UTC()}})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{moves.Key: string(data)}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	plannedMoves := func() float64 {
		m, _ := gathered(t, "ballast_scheduler_planned_moves", map[string]string{"plugin": loadaware.Name})
		return m.GetGauge().GetValue()
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return plannedMoves() == 1, nil
	})
	if err != nil {
		t.Fatalf("the scheduler never read the move (ballast_scheduler_planned_moves %v): %v", plannedMoves(), err)
	}

	if err := c.Client.CoreV1().Pods("default").Delete(ctx, evicted.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.UID != evicted.UID && p.Spec.NodeName != "" {
				if p.Spec.NodeName != "node-3" {
					t.Errorf("the replacement landed on %s, want node-3, where the move planned it", p.Spec.NodeName)
				}
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for web's replacement: %v", err)
	}
	deploy("api")
	if got := placement(t, ctx, c, "api", 1); got["node-1"] != 1 {
		t.Errorf("api placed %v, want node-1: web's plan is not api's", got)
	}
}
