// Package snapshot turns a real cluster into a scenario, so `ballast sim
// --from-cluster` can replay it: nodes with their allocatable resources,
// Deployments, DaemonSets, StatefulSets (with the nodes their volumes live
// on) and CronJobs (with their schedules) with their requests and measured
// usage, and everything else a node runs as its background, named in the
// scenario's description with what could not be carried over as it is. It
// only reads from the cluster.
package snapshot

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
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
	statefulSets, err := client.AppsV1().StatefulSets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing statefulsets: %w", err)
	}
	cronJobs, err := client.BatchV1().CronJobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing cronjobs: %w", err)
	}
	jobs, err := client.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	claims, err := client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing persistentvolumeclaims: %w", err)
	}
	volumes, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing persistentvolumes: %w", err)
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	m := readMetrics(ctx, metrics)
	var notes []string

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
	pinning := volumePinning{nodes: nodes.Items, claims: claims.Items, volumes: volumes.Items}
	for _, d := range statefulSets.Items {
		w, members := workload(d.ObjectMeta, d.Spec.Selector, d.Spec.Template, pods.Items, m)
		w.Kind, w.Replicas = scenario.StatefulSet, ptr.Deref(d.Spec.Replicas, 1)
		var note string
		w.VolumeNodes, note = pinning.of(d)
		if note != "" {
			notes = append(notes, note)
		}
		ws, memberss = append(ws, w), append(memberss, members)
	}
	for _, cj := range cronJobs.Items {
		w, members, note := cronWorkload(cj, jobs.Items, pods.Items, m)
		if note != "" {
			notes = append(notes, note)
		}
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
	sort.Strings(notes)
	sc.Description = fmt.Sprintf("Snapshot of %d nodes, %d Deployments, %d DaemonSets, %d StatefulSets and %d CronJobs taken %s.",
		len(nodes.Items), len(deployments.Items), len(daemonSets.Items), len(statefulSets.Items), len(cronJobs.Items),
		time.Now().UTC().Format(time.RFC3339)) + notCarried(pods.Items, owned) + strings.Join(notes, "")
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

// volumePinning reads where a StatefulSet's volumes live from the node
// affinity of the volumes its claims are bound to.
type volumePinning struct {
	nodes   []corev1.Node
	claims  []corev1.PersistentVolumeClaim
	volumes []corev1.PersistentVolume
}

// of returns the node each replica's volume lives on, by ordinal, up to the
// first replica whose volume is on no one node (none yet, or reachable
// from several nodes, or from none there), and a note saying why it
// stopped there when it stopped short of the replicas.
func (v volumePinning) of(sts appsv1.StatefulSet) ([]string, string) {
	if len(sts.Spec.VolumeClaimTemplates) == 0 {
		return nil, ""
	}
	replicas := int(ptr.Deref(sts.Spec.Replicas, 1))
	var out []string
	for i := range replicas {
		claim := fmt.Sprintf("%s-%s-%d", sts.Spec.VolumeClaimTemplates[0].Name, sts.Name, i)
		node, why := v.nodeOf(sts.Namespace, claim)
		if why != "" {
			if i == 0 && why == "not bound yet" {
				return nil, ""
			}
			return out, fmt.Sprintf(" StatefulSet %s/%s: the volumes of replicas %d and up are made where they are first placed (claim %s: %s).",
				sts.Namespace, sts.Name, i, claim, why)
		}
		out = append(out, node)
	}
	return out, ""
}

// nodeOf is the one node the volume of claim namespace/name lives on, or
// why there is none.
func (v volumePinning) nodeOf(namespace, name string) (string, string) {
	var volume string
	for _, c := range v.claims {
		if c.Namespace == namespace && c.Name == name {
			volume = c.Spec.VolumeName
		}
	}
	if volume == "" {
		return "", "not bound yet"
	}
	for _, pv := range v.volumes {
		if pv.Name != volume {
			continue
		}
		if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
			return "", "its volume " + volume + " is not kept on a node"
		}
		sel, err := nodeaffinity.NewNodeSelector(pv.Spec.NodeAffinity.Required)
		if err != nil {
			return "", fmt.Sprintf("its volume's node affinity cannot be read: %v", err)
		}
		var on []string
		for i := range v.nodes {
			if sel.Match(&v.nodes[i]) {
				on = append(on, v.nodes[i].Name)
			}
		}
		if len(on) != 1 {
			return "", fmt.Sprintf("its volume %s is reachable from %d nodes", volume, len(on))
		}
		return on[0], ""
	}
	return "", "its volume " + volume + " is not there"
}

// defaultRunFor is how long a CronJob's run lasts in a snapshot when none
// of its Jobs has finished to measure one.
const defaultRunFor = 5 * time.Minute

// cronWorkload describes CronJob cj: its schedule, its runs' parallelism,
// how long its last finished run took, and the pods of its running Jobs,
// which it returns; a note says what it could not carry over as it is.
func cronWorkload(cj batchv1.CronJob, jobs []batchv1.Job, pods []corev1.Pod, m usageMetrics) (scenario.Workload, []corev1.Pod, string) {
	tmpl := cj.Spec.JobTemplate.Spec
	w, _ := workload(cj.ObjectMeta, &metav1.LabelSelector{}, tmpl.Template, nil, m)
	w.Kind, w.Schedule = scenario.CronJob, cj.Spec.Schedule
	w.ConcurrencyPolicy = scenario.ConcurrencyPolicy(cj.Spec.ConcurrencyPolicy)
	w.Parallelism = max(ptr.Deref(tmpl.Parallelism, 1), 1)
	mine := map[string]bool{}
	var last *batchv1.Job
	for i := range jobs {
		j := &jobs[i]
		if ref := metav1.GetControllerOf(j); j.Namespace != cj.Namespace || ref == nil || ref.Kind != "CronJob" || ref.UID != cj.UID {
			continue
		}
		mine[j.Name] = true
		if j.Status.CompletionTime != nil && j.Status.StartTime != nil && (last == nil || j.Status.CompletionTime.After(last.Status.CompletionTime.Time)) {
			last = j
		}
	}
	var notes []string
	if last != nil {
		w.RunFor.Duration = last.Status.CompletionTime.Sub(last.Status.StartTime.Time).Round(time.Second)
	}
	if w.RunFor.Duration <= 0 {
		w.RunFor.Duration = defaultRunFor
		notes = append(notes, fmt.Sprintf("no finished run to time, each run lasts %s", defaultRunFor))
	}
	if cj.Spec.TimeZone != nil {
		notes = append(notes, fmt.Sprintf("its schedule is read in UTC, not %s", *cj.Spec.TimeZone))
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		notes = append(notes, "suspended, it runs in the simulation")
	}
	if c := ptr.Deref(tmpl.Completions, w.Parallelism); c != w.Parallelism {
		notes = append(notes, fmt.Sprintf("each run starts %d pods once, not %d completions", w.Parallelism, c))
	}
	var members []corev1.Pod
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if p.Namespace == cj.Namespace && ref != nil && ref.Kind == "Job" && mine[ref.Name] && p.Spec.NodeName != "" &&
			p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			members = append(members, p)
		}
	}
	// Its running pods' measured usage, else its requests, as a
	// workload's.
	var cpu, mem float64
	n := 0
	for _, p := range members {
		if u, ok := m.pods[p.Namespace+"/"+p.Name]; ok {
			cpu, mem, n = cpu+u.cpu, mem+u.mem, n+1
		}
	}
	if n > 0 {
		w.Usage.CPU.Value = *resource.NewMilliQuantity(int64(math.Round(cpu/float64(n)*1000)), resource.DecimalSI)
		w.Usage.Memory.Value = *resource.NewQuantity(int64(math.Round(mem/float64(n))), resource.BinarySI)
	}
	note := ""
	if len(notes) > 0 {
		note = fmt.Sprintf(" CronJob %s/%s: %s.", cj.Namespace, cj.Name, strings.Join(notes, "; "))
	}
	return w, members, note
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
