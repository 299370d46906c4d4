package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/objects"
)

// preferLabel is a trivial score plugin: nodes labelled preferLabelKey=true
// score MaxNodeScore, the rest 0. It counts its calls so the test can tell it
// ran.
type preferLabel struct{ calls *atomic.Int64 }

const (
	preferLabelName = "PreferLabel"
	preferLabelKey  = "ballast.test/preferred"
)

func (p *preferLabel) Name() string { return preferLabelName }

func (p *preferLabel) Score(_ context.Context, _ fwk.CycleState, _ *corev1.Pod, node fwk.NodeInfo) (int64, *fwk.Status) {
	p.calls.Add(1)
	if node.Node().Labels[preferLabelKey] == "true" {
		return fwk.MaxNodeScore, nil
	}
	return 0, nil
}

func (p *preferLabel) ScoreExtensions() fwk.ScoreExtensions { return nil }

// preferLabelConfig enables PreferLabel with a weight that outweighs every
// default score plugin together.
const preferLabelConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: PreferLabel
        weight: 50
`

func TestDeploymentScheduledByRealSchedulerWithCustomPlugin(t *testing.T) {
	c, ctx := startCluster(t)
	for _, spec := range []cluster.NodeSpec{
		{Name: "node-a", CPU: "8", Memory: "16Gi"},
		{Name: "node-b", CPU: "4", Memory: "4Gi", Arch: "arm64"},
		{Name: "node-c", CPU: "4", Memory: "4Gi", Arch: "arm64", Labels: map[string]string{preferLabelKey: "true"}},
	} {
		if _, err := c.AddNode(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int64
	factory := func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return &preferLabel{calls: &calls}, nil
	}
	if _, err := c.StartScheduler(ctx, preferLabelConfig, frameworkruntime.Registry{preferLabelName: factory}); err != nil {
		t.Fatal(err)
	}

	deploy := objects.MakeDeployment("web").Replicas(6).Requests("100m", "128Mi").Obj()
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitForRunningPods(t, c, "app=web", 6)
	for _, pod := range pods {
		// The plugin's weight makes node-c win for every pod that fits.
		if pod.Spec.NodeName != "node-c" {
			t.Errorf("pod %s on %q, want node-c (the node PreferLabel scores highest)", pod.Name, pod.Spec.NodeName)
		}
		if pod.Status.PodIP == "" {
			t.Errorf("pod %s has no pod IP", pod.Name)
		}
	}
	if calls.Load() == 0 {
		t.Errorf("the custom score plugin was never called")
	}

	// A deleted pod is recreated by the ReplicaSet controller and bound again.
	victim := pods[0]
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	after := waitForRunningPods(t, c, "app=web", 6)
	for _, pod := range after {
		if pod.UID == victim.UID {
			t.Errorf("deleted pod %s is still listed", victim.Name)
		}
	}
}

func TestRemoveNodeDeletesItsPods(t *testing.T) {
	c, ctx := startScheduling(t, "node-a", "node-b")
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("api").Replicas(4).Requests("100m", "128Mi").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRunningPods(t, c, "app=api", 4)

	if err := c.RemoveNode(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	pods := waitForRunningPods(t, c, "app=api", 4)
	for _, pod := range pods {
		if pod.Spec.NodeName != "node-b" {
			t.Errorf("pod %s on %q after node-a was removed, want node-b", pod.Name, pod.Spec.NodeName)
		}
	}
}

func TestNodeHasReadyStatusAndLease(t *testing.T) {
	c, ctx := startCluster(t)
	node, err := c.AddNode(ctx, cluster.NodeSpec{Name: "pi-1", CPU: "4", Memory: "8Gi", Pods: 30, Arch: "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Status.Allocatable[corev1.ResourcePods]; got.Value() != 30 {
		t.Errorf("allocatable pods = %s, want 30", got.String())
	}
	if got := node.Labels[cluster.LabelArch]; got != "arm64" {
		t.Errorf("arch label = %q, want arm64", got)
	}
	if len(node.Spec.Taints) != 0 {
		t.Errorf("taints = %v, want none (no not-ready taint without a node-lifecycle controller)", node.Spec.Taints)
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		t.Errorf("node has no Ready=True condition: %v", node.Status.Conditions)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "pi-1", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("no heartbeat lease for pi-1: %v", err)
	}
}

// waitForRunningPods waits until exactly want pods match selector, none
// terminating, all bound and Running, and returns them.
func waitForRunningPods(t *testing.T, c *cluster.Cluster, selector string, want int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		running := 0
		for _, pod := range list.Items {
			if pod.DeletionTimestamp == nil && pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		last = fmt.Sprintf("%d pods, %d running", len(list.Items), running)
		pods = list.Items
		return len(list.Items) == want && running == want, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d running pods %q: %v (last seen: %s)", want, selector, err, last)
	}
	return pods
}

// startCluster starts a cluster for one test; -short skips the test.
func startCluster(t *testing.T) (*cluster.Cluster, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatalf("starting cluster: %v", err)
	}
	return c, t.Context()
}

// startScheduling starts a cluster with the named nodes and the default
// scheduler.
func startScheduling(t *testing.T, nodes ...string) (*cluster.Cluster, context.Context) {
	t.Helper()
	c, ctx := startCluster(t)
	for _, name := range nodes {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// A node taken down stops reporting: Ready turns Unknown, it is tainted
// unreachable as the node lifecycle controller taints it, no heartbeat
// turns it Ready again, and a pod bound to it is not started; back, it
// is Ready, untainted, and starts what is bound to it.
func TestSetReachable(t *testing.T) {
	c, ctx := startCluster(t)
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "pi-1"}); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	if err := c.SetReachable(ctx, "pi-1", false, now); err != nil {
		t.Fatal(err)
	}
	state := func() (corev1.ConditionStatus, []corev1.Taint) {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, "pi-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status, node.Spec.Taints
			}
		}
		return "", node.Spec.Taints
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bound", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "pi-1", Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/c"}}}}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A heartbeat period and more: still down, the pod not started.
	time.Sleep(12 * time.Second)
	status, taints := state()
	if status != corev1.ConditionUnknown || len(taints) != 2 || taints[0].Key != corev1.TaintNodeUnreachable ||
		taints[0].Effect != corev1.TaintEffectNoSchedule || taints[1].Effect != corev1.TaintEffectNoExecute {
		t.Errorf("down: Ready=%s taints %v, want Unknown and unreachable NoSchedule and NoExecute", status, taints)
	}
	if p, err := c.Client.CoreV1().Pods("default").Get(ctx, "bound", metav1.GetOptions{}); err != nil || p.Status.Phase == corev1.PodRunning {
		t.Errorf("a pod bound to the node that is down: %v, phase %s; want it not started", err, p.Status.Phase)
	}

	if err := c.SetReachable(ctx, "pi-1", true, metav1.Now()); err != nil {
		t.Fatal(err)
	}
	if status, taints := state(); status != corev1.ConditionTrue || len(taints) != 0 {
		t.Errorf("back: Ready=%s taints %v, want True and none", status, taints)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "bound", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Errorf("the pod bound to the node never ran once it was back: %v", err)
	}
}

// TestScaleDownFollowsCostsTheControllersSaw sets each pod's deletion cost,
// waits until the controllers see them, and scales down: the pods ranked
// first go, whatever order the controller would break ties in. A wait for
// something the controllers never see ends with an error naming the pod.
func TestScaleDownFollowsCostsTheControllersSaw(t *testing.T) {
	c, ctx := startScheduling(t, "node-a")
	_, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("web").Replicas(4).Requests("100m", "128Mi").Obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := waitForRunningPods(t, c, "app=web", 4)
	costs, names := map[string]string{}, []string{}
	for i, p := range pods {
		costs[p.Name] = fmt.Sprint(i)
		names = append(names, p.Name)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, corev1.PodDeletionCost, costs[p.Name])
		if _, err := c.Client.CoreV1().Pods("default").Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitControllersSee(ctx, "default", names, func(p *corev1.Pod) bool {
		return p.Annotations[corev1.PodDeletionCost] == costs[p.Name]
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.AppsV1().Deployments("default").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var kept []string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		kept = nil
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				kept = append(kept, p.Name)
			}
		}
		return len(kept) == 2, nil
	}); err != nil {
		t.Fatalf("scale-down to 2 left %v: %v", kept, err)
	}
	for _, name := range kept {
		if costs[name] != "2" && costs[name] != "3" {
			t.Errorf("pod %s with deletion cost %s was kept; the scale-down should keep those costing 2 and 3", name, costs[name])
		}
	}

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = c.WaitControllersSee(short, "default", kept[:1], func(*corev1.Pod) bool { return false })
	if err == nil || !strings.Contains(err.Error(), kept[0]) {
		t.Errorf("waiting for what the controllers never see gave %v, want an error naming pod %s", err, kept[0])
	}
}
