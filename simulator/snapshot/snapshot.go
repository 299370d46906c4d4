// Package snapshot turns a real cluster into a scenario, so `ballast sim
// --from-cluster` can replay it: nodes with their allocatable resources,
// Deployments with their requests and measured usage, and everything else a
// node runs as its background. It only reads from the cluster.
package snapshot

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// DefaultDuration is how long a snapshot scenario runs.
const DefaultDuration = 30 * time.Minute

// Take reads nodes, Deployments, pods and, when metrics is not nil and
// metrics-server answers, current usage. A Deployment's pods use what
// metrics-server measured for them on average, or their requests when it
// has nothing; a node's background is its measured usage minus its
// Deployment pods' usage, or the requests of its other pods.
func Take(ctx context.Context, client kubernetes.Interface, metrics metricsclient.Interface) (*scenario.Scenario, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	deployments, err := client.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing deployments: %w", err)
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	m := readMetrics(ctx, metrics)

	sc := &scenario.Scenario{
		Name:        "from-cluster",
		Description: fmt.Sprintf("Snapshot of %d nodes and %d Deployments taken %s.", len(nodes.Items), len(deployments.Items), time.Now().UTC().Format(time.RFC3339)),
		Duration:    metav1.Duration{Duration: DefaultDuration},
	}
	owned := map[string]bool{} // namespace/name of pods belonging to a Deployment
	used := map[string]perNode{}
	for _, d := range deployments.Items {
		w, members := workload(d, pods.Items, m)
		sc.Workloads = append(sc.Workloads, w)
		for _, p := range members {
			owned[p.Namespace+"/"+p.Name] = true
			u := used[p.Spec.NodeName]
			u.cpu += w.Usage.CPU.Value.AsApproximateFloat64()
			u.mem += w.Usage.Memory.Value.AsApproximateFloat64()
			used[p.Spec.NodeName] = u
		}
	}
	for _, n := range nodes.Items {
		sc.Nodes = append(sc.Nodes, node(n, background(n.Name, pods.Items, owned, used[n.Name], m)))
	}
	sort.Slice(sc.Nodes, func(i, j int) bool { return sc.Nodes[i].Name < sc.Nodes[j].Name })
	sort.Slice(sc.Workloads, func(i, j int) bool { return sc.Workloads[i].Name < sc.Workloads[j].Name })
	scenario.SetDefaults(sc)
	if err := scenario.Validate(sc); err != nil {
		return nil, fmt.Errorf("the snapshot is not a valid scenario: %w", err)
	}
	return sc, nil
}

type perNode struct{ cpu, mem float64 }

// usageMetrics is what metrics-server measured: per node, and per pod
// (namespace/name).
type usageMetrics struct {
	nodes map[string]perNode
	pods  map[string]perNode
}

func readMetrics(ctx context.Context, client metricsclient.Interface) usageMetrics {
	m := usageMetrics{nodes: map[string]perNode{}, pods: map[string]perNode{}}
	if client == nil {
		return m
	}
	logger := klog.FromContext(ctx)
	if list, err := client.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{}); err != nil {
		logger.Info("No node usage from metrics-server; nodes get their pods' requests as background", "err", err)
	} else {
		for _, n := range list.Items {
			m.nodes[n.Name] = perNode{cpu: n.Usage.Cpu().AsApproximateFloat64(), mem: n.Usage.Memory().AsApproximateFloat64()}
		}
	}
	if list, err := client.MetricsV1beta1().PodMetricses(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err != nil {
		logger.Info("No pod usage from metrics-server; pods use their requests", "err", err)
	} else {
		for _, p := range list.Items {
			var u perNode
			for _, c := range p.Containers {
				u.cpu += c.Usage.Cpu().AsApproximateFloat64()
				u.mem += c.Usage.Memory().AsApproximateFloat64()
			}
			m.pods[p.Namespace+"/"+p.Name] = u
		}
	}
	return m
}

// workload describes d and returns its running pods.
func workload(d appsv1.Deployment, pods []corev1.Pod, m usageMetrics) (scenario.Workload, []corev1.Pod) {
	w := scenario.Workload{Name: d.Name, Namespace: d.Namespace, Replicas: 1, NodeSelector: d.Spec.Template.Spec.NodeSelector}
	if d.Spec.Replicas != nil {
		w.Replicas = *d.Spec.Replicas
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		w.Requests.CPU.Add(c.Resources.Requests[corev1.ResourceCPU])
		w.Requests.Memory.Add(c.Resources.Requests[corev1.ResourceMemory])
		w.Limits.CPU.Add(c.Resources.Limits[corev1.ResourceCPU])
		w.Limits.Memory.Add(c.Resources.Limits[corev1.ResourceMemory])
	}
	var members []corev1.Pod
	var measured perNode
	var n int
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil && !sel.Empty() {
		for _, p := range pods {
			if p.Namespace != d.Namespace || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			members = append(members, p)
			if u, ok := m.pods[p.Namespace+"/"+p.Name]; ok {
				measured.cpu += u.cpu
				measured.mem += u.mem
				n++
			}
		}
	}
	cpu, mem := w.Requests.CPU.AsApproximateFloat64(), w.Requests.Memory.AsApproximateFloat64()
	if n > 0 {
		cpu, mem = measured.cpu/float64(n), measured.mem/float64(n)
	}
	w.Usage.CPU = scenario.Profile{Type: scenario.Constant, Value: *resource.NewMilliQuantity(int64(cpu*1000), resource.DecimalSI)}
	w.Usage.Memory = scenario.Profile{Type: scenario.Constant, Value: *resource.NewQuantity(int64(mem), resource.BinarySI)}
	return w, members
}

// background is what the node uses besides its Deployment pods.
func background(name string, pods []corev1.Pod, owned map[string]bool, deployments perNode, m usageMetrics) scenario.Resources {
	var cpu, mem float64
	if u, ok := m.nodes[name]; ok {
		cpu, mem = max(u.cpu-deployments.cpu, 0), max(u.mem-deployments.mem, 0)
	} else {
		for _, p := range pods {
			if p.Spec.NodeName != name || owned[p.Namespace+"/"+p.Name] || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, c := range p.Spec.Containers {
				cpu += c.Resources.Requests.Cpu().AsApproximateFloat64()
				mem += c.Resources.Requests.Memory().AsApproximateFloat64()
			}
		}
	}
	return scenario.Resources{
		CPU:    *resource.NewMilliQuantity(int64(cpu*1000), resource.DecimalSI),
		Memory: *resource.NewQuantity(int64(mem), resource.BinarySI),
	}
}

func node(n corev1.Node, bg scenario.Resources) scenario.Node {
	out := scenario.Node{
		Name:          n.Name,
		CPU:           n.Status.Allocatable[corev1.ResourceCPU],
		Memory:        n.Status.Allocatable[corev1.ResourceMemory],
		Pods:          n.Status.Allocatable.Pods().Value(),
		Arch:          n.Labels[corev1.LabelArchStable],
		Unschedulable: n.Spec.Unschedulable,
		Background:    bg,
	}
	keys := make([]string, 0, len(n.Labels))
	for k := range n.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	const rolePrefix = "node-role.kubernetes.io/"
	for _, k := range keys {
		if role, ok := strings.CutPrefix(k, rolePrefix); ok {
			if out.Role == "" && role != "" {
				out.Role = role
			}
			continue
		}
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[k] = n.Labels[k]
	}
	return out
}
