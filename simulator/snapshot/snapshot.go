// Package snapshot turns a real cluster into a scenario, so `ballast sim
// --from-cluster` can replay it: nodes with their allocatable resources,
// Deployments and DaemonSets with their requests and measured usage, and
// everything else a node runs as its background, named in the scenario's
// description. It only reads from the cluster.
package snapshot

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// DefaultDuration is how long a snapshot scenario runs.
const DefaultDuration = 30 * time.Minute

// Take reads nodes, Deployments, DaemonSets, pods and, when metrics is not
// nil and metrics-server answers, current usage. A workload's pods use what
// metrics-server measured for them on average, or their requests when it
// has nothing; a node's background is its measured usage minus its
// workload pods' usage, or the requests of its other pods, which the
// description counts by controller.
func Take(ctx context.Context, client kubernetes.Interface, metrics metricsclient.Interface) (*scenario.Scenario, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	deployments, err := client.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing deployments: %w", err)
	}
	daemonSets, err := client.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing daemonsets: %w", err)
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	m := readMetrics(ctx, metrics)

	sc := &scenario.Scenario{
		Name:     "from-cluster",
		Duration: metav1.Duration{Duration: DefaultDuration},
	}
	var ws []scenario.Workload
	var memberss [][]corev1.Pod
	for _, d := range deployments.Items {
		w, members := workload(d.ObjectMeta, d.Spec.Selector, d.Spec.Template, pods.Items, m)
		w.Replicas = ptr.Deref(d.Spec.Replicas, 1)
		ws, memberss = append(ws, w), append(memberss, members)
	}
	for _, d := range daemonSets.Items {
		w, members := workload(d.ObjectMeta, d.Spec.Selector, d.Spec.Template, pods.Items, m)
		w.Kind = scenario.DaemonSet
		ws, memberss = append(ws, w), append(memberss, members)
	}
	owned := map[string]bool{} // namespace/name of pods belonging to a workload
	used := map[string]perNode{}
	for i, w := range ws {
		members := memberss[i]
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
	sc.Description = fmt.Sprintf("Snapshot of %d nodes, %d Deployments and %d DaemonSets taken %s.", len(nodes.Items), len(deployments.Items),
		len(daemonSets.Items), time.Now().UTC().Format(time.RFC3339)) + notCarried(pods.Items, owned)
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

// notCarried says which running pods the scenario holds as their nodes'
// background only, by what controls them: the simulation never moves them
// and places nothing like them.
func notCarried(pods []corev1.Pod, owned map[string]bool) string {
	byKind := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName == "" || owned[p.Namespace+"/"+p.Name] || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		kind := "without a controller"
		if ref := metav1.GetControllerOf(&p); ref != nil {
			kind = "of " + ref.Kind + "s"
		}
		byKind[kind]++
	}
	if len(byKind) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s %s", byKind[k], plural(byKind[k], "pod"), k))
	}
	return " Not carried over as workloads, only as their nodes' background (never moved, never placed): " + strings.Join(parts, ", ") + "."
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// workload describes the Deployment or DaemonSet of meta, selector and
// tmpl, and returns its running pods; the caller sets its kind and
// replicas.
func workload(meta metav1.ObjectMeta, selector *metav1.LabelSelector, tmpl corev1.PodTemplateSpec, pods []corev1.Pod, m usageMetrics) (scenario.Workload, []corev1.Pod) {
	w := scenario.Workload{Name: meta.Name, Namespace: meta.Namespace, NodeSelector: tmpl.Spec.NodeSelector}
	for _, c := range tmpl.Spec.Containers {
		w.Requests.CPU.Add(c.Resources.Requests[corev1.ResourceCPU])
		w.Requests.Memory.Add(c.Resources.Requests[corev1.ResourceMemory])
		w.Limits.CPU.Add(c.Resources.Limits[corev1.ResourceCPU])
		w.Limits.Memory.Add(c.Resources.Limits[corev1.ResourceMemory])
	}
	var members []corev1.Pod
	var measured perNode
	var n int
	if sel, err := metav1.LabelSelectorAsSelector(selector); err == nil && !sel.Empty() {
		for _, p := range pods {
			if p.Namespace != meta.Namespace || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || !sel.Matches(labels.Set(p.Labels)) {
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
	w.Usage.CPU = scenario.Profile{Type: scenario.Constant, Value: *resource.NewMilliQuantity(int64(math.Round(cpu*1000)), resource.DecimalSI)}
	w.Usage.Memory = scenario.Profile{Type: scenario.Constant, Value: *resource.NewQuantity(int64(math.Round(mem)), resource.BinarySI)}
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
		CPU:    *resource.NewMilliQuantity(int64(math.Round(cpu*1000)), resource.DecimalSI),
		Memory: *resource.NewQuantity(int64(math.Round(mem)), resource.BinarySI),
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
