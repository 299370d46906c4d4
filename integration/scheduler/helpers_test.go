package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// startCluster starts an in-process cluster with nodes of 4 CPUs and 8Gi.
func startCluster(t *testing.T, nodes ...string) (*cluster.Cluster, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	for _, n := range nodes {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"}); err != nil {
			t.Fatalf("adding node %s: %v", n, err)
		}
	}
	return c, ctx
}

// staticUsage runs load-watcher's collector in-process, sampling provider
// every period, and returns it as the scheduler's usage source once it has
// a first snapshot.
func staticUsage(tb testing.TB, c *cluster.Cluster, provider *static.Provider, period time.Duration) plugins.SourceFactory {
	return func(ctx context.Context, _ fwk.Handle) (nodeload.Source, error) {
		lw, err := inprocess.New(inprocess.Config{
			RestConfig: c.RestConfig,
			Source:     provider,
			Period:     period,
			StaleAfter: time.Hour,
		})
		if err != nil {
			return nil, err
		}
		go func() {
			if err := lw.Run(ctx); err != nil && ctx.Err() == nil {
				tb.Errorf("collector stopped: %v", err)
			}
		}()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := client.WaitForSnapshot(wctx, lw); err != nil {
			return nil, fmt.Errorf("waiting for the first usage snapshot: %w", err)
		}
		return lw, nil
	}
}

// shippedProfile reads a configuration shipped in scheduler/config.
func shippedProfile(t *testing.T, file string) string {
	t.Helper()
	data, err := config.Shipped(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withProfile appends a profile (YAML of one list item, indented as under
// `profiles:`) to a configuration.
func withProfile(config, profile string) string {
	return strings.TrimRight(config, "\n") + "\n" + profile
}

// placement waits until n pods labelled app=name are bound and returns how
// many each node got.
func placement(t *testing.T, ctx context.Context, c *cluster.Cluster, name string, n int) map[string]int {
	t.Helper()
	var perNode map[string]int
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return false, err
		}
		perNode = map[string]int{}
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				perNode[p.Spec.NodeName]++
				bound++
			}
		}
		return bound == n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d pods of %s to be bound (got %v): %v", n, name, perNode, err)
	}
	return perNode
}

// deleteDeployment deletes a deployment and waits until its pods are gone.
func deleteDeployment(t *testing.T, ctx context.Context, c *cluster.Cluster, name string) {
	t.Helper()
	if err := c.Client.AppsV1().Deployments("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// No garbage collector runs in the in-process cluster: remove the
	// ReplicaSets and pods explicitly. The deployment controller may not have
	// seen the Deployment go yet and can create a ReplicaSet (and the
	// ReplicaSet controller pods) after a first sweep, so sweep until a list
	// of both comes back empty.
	sel := metav1.ListOptions{LabelSelector: "app=" + name}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Client.AppsV1().ReplicaSets("default").DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
			return false, fmt.Errorf("deleting the ReplicaSets of %s: %w", name, err)
		}
		if err := c.Client.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
			return false, fmt.Errorf("deleting the pods of %s: %w", name, err)
		}
		sets, err := c.Client.AppsV1().ReplicaSets("default").List(ctx, sel)
		if err != nil {
			return false, err
		}
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, sel)
		if err != nil {
			return false, err
		}
		return len(sets.Items) == 0 && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("waiting for the pods of %s to go: %v", name, err)
	}
}
