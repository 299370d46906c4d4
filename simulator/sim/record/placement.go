package record

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	lwclient "github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// liveWindow is the load-watcher window whose mean a live placement shows:
// long enough to smooth noise, short enough to follow a move.
const liveWindow = usage.Window5m

// OtherWorkload groups the pods that are not part of the scenario.
const OtherWorkload = "(other)"

// A served cluster describes itself in this ConfigMap, so that tools given
// only its kubeconfig (`ballast sim report`) find load-watcher.
const (
	InfoNamespace = metav1.NamespaceSystem
	InfoName      = "ballast-sim"
	// InfoLoadWatcher is the key of load-watcher's base URL.
	InfoLoadWatcher = "loadWatcher"
	// InfoCPUThreshold and InfoMemoryThreshold are the keys of the
	// scheduler's thresholds, in percent.
	InfoCPUThreshold    = "cpuThreshold"
	InfoMemoryThreshold = "memoryThreshold"
)

// Placement is a live cluster's nodes as the summary table shows them.
type Placement struct {
	// Window is the load-watcher window the usage figures are the mean of.
	Window string `json:"window"`
	// Thresholds are the scheduler thresholds hot nodes are judged by.
	Thresholds Thresholds `json:"thresholds"`
	// Summary condenses the nodes; Summary.Final holds every node.
	Summary Summary `json:"summary"`
}

// Report measures a served cluster: pods and requests from the API, usage
// from load-watcher's /api/v1/usage at loadWatcher, or, when that is empty,
// at the address the cluster publishes in InfoNamespace/InfoName. Hot
// nodes are judged by the scheduler thresholds the cluster publishes there,
// or by fallback.
func Report(ctx context.Context, client kubernetes.Interface, loadWatcher string, fallback Thresholds) (*Placement, error) {
	thresholds := fallback
	cm, err := client.CoreV1().ConfigMaps(InfoNamespace).Get(ctx, InfoName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && loadWatcher == "":
		return nil, fmt.Errorf("no ConfigMap %s/%s: the cluster was not started by `ballast sim --serve`; give load-watcher's address", InfoNamespace, InfoName)
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("reading %s/%s: %w", InfoNamespace, InfoName, err)
	default:
		if loadWatcher == "" {
			if loadWatcher = cm.Data[InfoLoadWatcher]; loadWatcher == "" {
				return nil, fmt.Errorf("ConfigMap %s/%s has no %s", InfoNamespace, InfoName, InfoLoadWatcher)
			}
		}
		if thresholds, err = PublishedThresholds(cm.Data, fallback); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s: %w", InfoNamespace, InfoName, err)
		}
	}
	lw, err := lwclient.New(lwclient.Config{Address: loadWatcher})
	if err != nil {
		return nil, err
	}
	if err := lw.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("reading usage from load-watcher at %s: %w", loadWatcher, err)
	}
	return Observe(ctx, client, lw.Snapshot(), thresholds)
}

// Observe measures a live cluster: pods and requests from the API, usage
// from a load-watcher snapshot as the mean over liveWindow (or the shortest
// window the snapshot has). A node without fresh usage is marked NoUsage
// and left out of the utilisation figures. Hot nodes are judged by
// thresholds.
func Observe(ctx context.Context, client kubernetes.Interface, snap *usage.Snapshot, thresholds Thresholds) (*Placement, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	byNode := map[string][]*corev1.Pod{}
	pending := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Status.Phase != corev1.PodRunning {
			pending++
		}
		if p.Spec.NodeName != "" {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	window := pickWindow(snap)
	out := &Placement{Window: window.String(), Thresholds: thresholds}
	util := map[string]float64{}
	for _, n := range nodes.Items {
		s := observeNode(&n, byNode[n.Name], snap, window)
		if !s.NoUsage {
			util[n.Name] = s.Utilisation()
		}
		out.Summary.Final = append(out.Summary.Final, s)
	}
	final := out.Summary.Final
	out.Summary = Summarize(util)
	out.Summary.Final, out.Summary.Pending = final, pending
	for _, n := range final {
		if !n.NoUsage && thresholds.Over(n.CPU, n.Memory) {
			out.Summary.OverThreshold++
		}
	}
	return out, nil
}

// observeNode is one node with the pods bound to it.
func observeNode(n *corev1.Node, pods []*corev1.Pod, snap *usage.Snapshot, window usage.Window) NodeStep {
	cpuAlloc := float64(n.Status.Allocatable.Cpu().MilliValue()) / 1000
	memAlloc := float64(n.Status.Allocatable.Memory().Value())
	s := NodeStep{Node: n.Name, Cordoned: n.Spec.Unschedulable, Pods: len(pods), Workloads: map[string]int{}}
	var req model.Amount
	for _, p := range pods {
		req = req.Add(model.PodRequests(p))
		w := p.Labels[model.WorkloadLabel]
		if w == "" {
			w = OtherWorkload
		}
		s.Workloads[w]++
	}
	if cpuAlloc > 0 {
		s.CPURequests = 100 * req.CPU / cpuAlloc
	}
	if memAlloc > 0 {
		s.MemoryRequests = 100 * req.Memory / memAlloc
	}
	u, fresh := snap.Node(n.Name)
	cpu, okCPU := u.Get(window, usage.CPU)
	mem, okMem := u.Get(window, usage.Memory)
	s.NoUsage = !fresh || !okCPU || !okMem
	if !s.NoUsage {
		s.CPU, s.Memory = cpu.Avg, mem.Avg
	}
	return s
}

// pickWindow is liveWindow when the snapshot has it, else its shortest.
func pickWindow(snap *usage.Snapshot) usage.Window {
	var shortest usage.Window
	if snap == nil {
		return liveWindow
	}
	for _, n := range snap.Nodes {
		for w := range n.Windows {
			if w == liveWindow {
				return w
			}
			if shortest == 0 || w < shortest {
				shortest = w
			}
		}
	}
	if shortest == 0 {
		return liveWindow
	}
	return shortest
}

// PublishedThresholds are the thresholds a served cluster's info names, the
// fallback's for a key it does not have.
func PublishedThresholds(info map[string]string, fallback Thresholds) (Thresholds, error) {
	out := fallback
	for key, into := range map[string]*float64{InfoCPUThreshold: &out.CPU, InfoMemoryThreshold: &out.Memory} {
		v, ok := info[key]
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return Thresholds{}, fmt.Errorf("%s: %q is not a percentage", key, v)
		}
		*into = f
	}
	return out, nil
}

// PublishThresholds writes t into a served cluster's info.
func PublishThresholds(info map[string]string, t Thresholds) {
	info[InfoCPUThreshold] = strconv.FormatFloat(t.CPU, 'f', -1, 64)
	info[InfoMemoryThreshold] = strconv.FormatFloat(t.Memory, 'f', -1, 64)
}
