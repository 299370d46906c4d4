package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/config"
	schedulerexplain "github.com/ballast-sched/ballast/scheduler/pkg/explain"
	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"
)

// TestExplainSaysWhereAPodGoesAndWhy runs Explain on a real API server: a
// node whose memory a process fills is rejected by LoadAware with the
// figures it compared, a tainted node by TaintToleration, the coolest node
// is the best; a pod no node can take says which filter stops it
// everywhere; a pod of another scheduler says so.
func TestExplainSaysWhereAPodGoesAndWhy(t *testing.T) {
	c, ctx := startCluster(t, "node-hot", "node-cool", "node-warm")
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-tainted", Taints: []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}}); err != nil {
		t.Fatal(err)
	}
	provider := static.New()
	for node, u := range map[string][2]float64{"node-hot": {20, 95}, "node-cool": {10, 20}, "node-warm": {45, 50}, "node-tainted": {5, 5}} {
		provider.Set(node, u[0], u[1])
	}
	snap := usageSnapshot(t, ctx, c, provider)
	cfg := []byte(strings.Replace(config.DefaultScheduler, "schedulerName: default-scheduler", "schedulerName: ballast-scheduler", 1))

	explain := func(t *testing.T, pod *v1.Pod) *explanation.Explanation {
		t.Helper()
		created, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := schedulerexplain.Explain(ctx, schedulerexplain.Input{Config: cfg, Client: c.Client, RestConfig: c.RestConfig, Usage: snap, Pod: created})
		if err != nil {
			t.Fatalf("Explain: %v", err)
		}
		return ex
	}
	node := func(ex *explanation.Explanation, name string) explanation.NodeExplanation {
		for _, n := range ex.Nodes {
			if n.Name == name {
				return n
			}
		}
		t.Fatalf("no node %s in %+v", name, ex.Nodes)
		return explanation.NodeExplanation{}
	}

	t.Run("placed", func(t *testing.T) {
		ex := explain(t, explainPod("web", "ballast-scheduler", nil))
		if ex.Profile != "ballast-scheduler" || len(ex.Best) != 1 || ex.Best[0] != "node-cool" {
			t.Fatalf("profile %q, best %v; want node-cool", ex.Profile, ex.Best)
		}
		hot := node(ex, "node-hot")
		if hot.Feasible || hot.Rejected == nil || hot.Rejected.Plugin != "LoadAware" || !strings.Contains(strings.Join(hot.Rejected.Reasons, " "), "memory") {
			t.Errorf("node-hot: %+v; want LoadAware to reject it for memory", hot.Rejected)
		}
		var mem bool
		for _, r := range hot.Load.Resources {
			if r.Resource == usage.Memory {
				mem = true
				if r.Current < 94 || r.Current > 96 || r.Threshold != 90 || !r.Over || r.Predicted <= r.Current {
					t.Errorf("node-hot memory: %+v; want 95 %% measured, over its 90 %% threshold once the pod is added", r)
				}
			}
		}
		if !mem {
			t.Errorf("node-hot: no memory figures in %+v", hot.Load)
		}
		tainted := node(ex, "node-tainted")
		if tainted.Feasible || tainted.Rejected.Plugin != "TaintToleration" {
			t.Errorf("node-tainted: %+v; want TaintToleration", tainted.Rejected)
		}
		cool, warm := node(ex, "node-cool"), node(ex, "node-warm")
		if !cool.Feasible || !warm.Feasible || cool.Total <= warm.Total {
			t.Errorf("node-cool %d, node-warm %d: want both feasible, the cool one ahead", cool.Total, warm.Total)
		}
		if cool.Load.Score == nil || warm.Load.Score == nil || cool.Load.Score.Usage <= warm.Load.Score.Usage {
			t.Errorf("LoadAware's usage term: cool %+v, warm %+v", cool.Load.Score, warm.Load.Score)
		}
		var la bool
		for _, s := range cool.Scores {
			la = la || s.Plugin == "LoadAware"
		}
		if !la {
			t.Errorf("node-cool's scores lack LoadAware: %+v", cool.Scores)
		}
		if ex.Nodes[0].Name != "node-cool" {
			t.Errorf("nodes not best first: %s first", ex.Nodes[0].Name)
		}
	})
	t.Run("pending", func(t *testing.T) {
		ex := explain(t, explainPod("ssd", "ballast-scheduler", map[string]string{"disk": "ssd"}))
		if len(ex.Best) != 0 {
			t.Fatalf("best %v for a pod no node can take", ex.Best)
		}
		for _, n := range ex.Nodes {
			if n.Feasible || n.Rejected == nil {
				t.Errorf("%s: feasible or without a reason", n.Name)
			}
		}
	})
	t.Run("another scheduler", func(t *testing.T) {
		if ex := explain(t, explainPod("other", "default-scheduler", nil)); !ex.OtherScheduler {
			t.Fatalf("a default-scheduler pod: %+v", ex)
		}
	})
}

// usageSnapshot runs load-watcher's collector in-process on provider and
// returns its first snapshot.
func usageSnapshot(t *testing.T, ctx context.Context, c *cluster.Cluster, provider *static.Provider) *usage.Snapshot {
	t.Helper()
	lw, err := inprocess.New(inprocess.Config{RestConfig: c.RestConfig, Source: provider, Period: time.Second, StaleAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = lw.Run(ctx) }()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	snap, err := client.WaitForSnapshot(wctx, lw)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func explainPod(name, scheduler string, selector map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			SchedulerName: scheduler,
			NodeSelector:  selector,
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("256Mi")},
			}}},
		},
	}
}
