package snapshot

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/cluster/metricsapi"
	"github.com/ballast-sched/ballast/simulator/scenario"
)

type fixedUsage map[string]corev1.ResourceList

func (f fixedUsage) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	return f, time.Now(), 15 * time.Second
}

// TestTakeFromCluster snapshots a real API server whose metrics API serves
// node usage but no pod usage, so pods count their requests and each node's
// background is its usage minus its pods' requests.
func TestTakeFromCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	ctx := context.Background()
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []cluster.NodeSpec{
		{Name: "pi-1", CPU: "4", Memory: "8Gi", Arch: "arm64", Labels: map[string]string{"node-role.kubernetes.io/agent": "true", "disk": "ssd"}},
		{Name: "pi-2", CPU: "4", Memory: "8Gi", Arch: "arm64", Unschedulable: true},
	} {
		if _, err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				}}}},
			},
		},
	}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := c.Client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.ReadyReplicas == 3, nil
	})
	if err != nil {
		t.Fatalf("web never became ready: %v", err)
	}
	// A DaemonSet (on the cordoned node too) and a pod of no controller.
	agentLabels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: agentLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: agentLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
				}}}},
			},
		},
	}
	if _, err := c.Client.AppsV1().DaemonSets("kube-system").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "sh", Image: "busybox"}}}}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, bare, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := c.Client.AppsV1().DaemonSets("kube-system").Get(ctx, "agent", metav1.GetOptions{})
		if err != nil || got.Status.NumberReady != 2 {
			return false, nil
		}
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "debug", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "", nil
	})
	if err != nil {
		t.Fatalf("the DaemonSet's pods and the bare pod never ran: %v", err)
	}
	srv, err := metricsapi.Start(fixedUsage{
		"pi-1": {corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
		"pi-2": {corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	mc, err := metricsclient.NewForConfig(srv.RestConfig())
	if err != nil {
		t.Fatal(err)
	}

	sc, err := Take(ctx, c.Client, mc)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Nodes) != 2 || len(sc.Workloads) != 2 {
		t.Fatalf("snapshot has %d nodes and %d workloads, want 2 and 2", len(sc.Nodes), len(sc.Workloads))
	}
	pi1, pi2, agent, web := sc.Nodes[0], sc.Nodes[1], sc.Workloads[0], sc.Workloads[1]
	if agent.Name != "agent" || agent.Kind != scenario.DaemonSet || agent.Namespace != "kube-system" || agent.Replicas != 0 ||
		agent.Usage.Memory.Value.String() != "32Mi" {
		t.Errorf("agent = %+v; want the DaemonSet, using its requests", agent)
	}
	if want := "1 pod without a controller"; !strings.Contains(sc.Description, want) {
		t.Errorf("description %q does not say %q", sc.Description, want)
	}
	if pi1.Name != "pi-1" || pi1.Arch != "arm64" || pi1.Role != "agent" || pi1.Labels["disk"] != "ssd" || pi1.CPU.String() != "4" {
		t.Errorf("pi-1 = %+v", pi1)
	}
	if !pi2.Unschedulable {
		t.Errorf("pi-2 lost its cordon")
	}
	if web.Replicas != 3 || web.Requests.CPU.String() != "100m" || web.Usage.CPU.Value.String() != "100m" {
		t.Errorf("web = %+v; want 3 replicas, requests and usage 100m (no pod metrics)", web)
	}
	// pi-2 is cordoned, so all three web pods run on pi-1, beside an agent:
	// 1 core − 3×100m − 50m; pi-2 runs its agent only.
	if got := pi1.Background.CPU.AsApproximateFloat64(); math.Abs(got-0.65) > 1e-9 {
		t.Errorf("pi-1 background cpu = %v, want 0.65", got)
	}
	if got := pi2.Background.Memory.Value(); got != 480<<20 {
		t.Errorf("pi-2 background memory = %d, want 480Mi", got)
	}
	// The snapshot written out is a scenario that parses again.
	data, err := yaml.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scenario.Parse(data); err != nil {
		t.Errorf("the written snapshot does not parse: %v\n%s", err, data)
	}
}
