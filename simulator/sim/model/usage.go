package model

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// Amount is CPU in cores and memory in bytes.
type Amount struct {
	CPU    float64
	Memory float64
}

// Add returns a+b.
func (a Amount) Add(b Amount) Amount { return Amount{CPU: a.CPU + b.CPU, Memory: a.Memory + b.Memory} }

// UsageModel computes what a node really uses at a step: its background, the
// hogs running on it and the profiles of its pods. Noise depends only on the
// seed, the workload, the node, the pod's ordinal among that workload's pods
// on the node, and the step, so two runs that place pods alike see the same
// usage whatever the pods are called.
type UsageModel struct {
	seed      int64
	nodes     map[string]scenario.Node
	workloads map[string]scenario.Workload
	hogs      []scenario.Event
	// outages are the reboots and power losses: a node is down from At
	// for For (for good when For is zero).
	outages  []scenario.Event
	duration time.Duration
	// changes are the times the cluster changed: a node joined, was
	// cordoned or uncordoned, a process outside Kubernetes started or
	// stopped, a workload was scaled.
	changes []time.Duration
}

// NewUsageModel is sc's usage model.
func NewUsageModel(sc *scenario.Scenario) *UsageModel {
	m := &UsageModel{seed: sc.Seed, nodes: map[string]scenario.Node{}, workloads: map[string]scenario.Workload{}, duration: sc.Duration.Duration}
	for _, n := range sc.Nodes {
		m.nodes[n.Name] = n
	}
	for _, w := range sc.Workloads {
		m.workloads[w.Name] = w
	}
	for _, e := range sc.Events {
		if e.Type == scenario.RestartDescheduler {
			// Nothing changes in the cluster: what is undone after
			// it is a loop.
			continue
		}
		m.changes = append(m.changes, e.At.Duration)
		switch e.Type {
		case scenario.Hog:
			m.hogs = append(m.hogs, e)
			if e.For.Duration > 0 {
				m.changes = append(m.changes, e.At.Duration+e.For.Duration)
			}
		case scenario.Reboot:
			m.outages = append(m.outages, e)
			m.changes = append(m.changes, e.At.Duration+e.For.Duration)
		case scenario.PowerLoss:
			e.For.Duration = 0
			m.outages = append(m.outages, e)
		}
	}
	return m
}

// hogActive reports whether hog runs at t.
func hogActive(hog scenario.Event, t time.Duration) bool {
	if t < hog.At.Duration {
		return false
	}
	return hog.For.Duration == 0 || t < hog.At.Duration+hog.For.Duration
}

// Hogged reports whether a hog runs on node at t and already ran a step
// earlier, so that a usage sample could show it: a hog that starts at the
// very moment a pod is placed is invisible to any scheduler.
func (m *UsageModel) Hogged(node string, t, step time.Duration) bool {
	for _, h := range m.hogs {
		if h.Node == node && hogActive(h, t) && hogActive(h, t-step) {
			return true
		}
	}
	return false
}

// Down reports whether node is down at t (rebooting or without power): it
// runs nothing and reports nothing.
func (m *UsageModel) Down(node string, t time.Duration) bool {
	for _, o := range m.outages {
		if o.Node == node && hogActive(o, t) {
			return true
		}
	}
	return false
}

// DownSince is when node's current outage began, and whether it is down at
// t.
func (m *UsageModel) DownSince(node string, t time.Duration) (time.Duration, bool) {
	for _, o := range m.outages {
		if o.Node == node && hogActive(o, t) {
			return o.At.Duration, true
		}
	}
	return 0, false
}

// NodeUsage returns the node's usage at step (simulated time t) with pods
// giving the number of pods of each workload running on it.
func (m *UsageModel) NodeUsage(node string, pods map[string]int, t time.Duration, step int64) Amount {
	total := m.BaseUsage(node, t)
	for _, p := range m.PodUsages(node, pods, t, step) {
		total = total.Add(p.Amount)
	}
	return total
}

// BaseUsage is what node uses outside its pods: its background and the hogs
// running on it at t; nothing while it is down.
func (m *UsageModel) BaseUsage(node string, t time.Duration) Amount {
	if m.Down(node, t) {
		return Amount{}
	}
	n := m.nodes[node]
	total := Amount{CPU: n.Background.CPU.AsApproximateFloat64(), Memory: n.Background.Memory.AsApproximateFloat64()}
	for _, h := range m.hogs {
		if h.Node == node && hogActive(h, t) {
			total = total.Add(Amount{CPU: h.Resources.CPU.AsApproximateFloat64(), Memory: h.Resources.Memory.AsApproximateFloat64()})
		}
	}
	return total
}

// PodUsage is the usage of one of a workload's pods on a node.
type PodUsage struct {
	Workload string
	Amount
}

// PodUsages returns the usage of every scenario pod on node at step, in a
// stable order (workload name, then ordinal).
func (m *UsageModel) PodUsages(node string, pods map[string]int, t time.Duration, step int64) []PodUsage {
	names := make([]string, 0, len(pods))
	for w := range pods {
		names = append(names, w)
	}
	sort.Strings(names)
	var out []PodUsage
	for _, name := range names {
		w, ok := m.workloads[name]
		if !ok {
			continue
		}
		for i := range pods[name] {
			out = append(out, PodUsage{Workload: name, Amount: m.podUsage(w, node, i, t, step)})
		}
	}
	return out
}

// podUsage is what the ordinal-th pod of w on node uses at step (simulated
// time t). The node's usage is its background, its hogs and the sum of its
// pods' usage.
func (m *UsageModel) podUsage(w scenario.Workload, node string, ordinal int, t time.Duration, step int64) Amount {
	if m.Down(node, t) {
		return Amount{}
	}
	key := fmt.Sprintf("%s/%s/%d", w.Name, node, ordinal)
	return Amount{
		CPU:    w.Usage.CPU.Amount(t, scenario.NoiseAt(m.seed, key+"/cpu", step)),
		Memory: w.Usage.Memory.Amount(t, scenario.NoiseAt(m.seed, key+"/memory", step)),
	}
}

// PodsUsage is the usage of every bound pod at step (simulated time t): the
// pods of a workload on a node share what its profile gives them together
// (the node's total is NodeUsage's), each using their mean; a pod from
// elsewhere uses its requests. No pod's usage depends on its name, which
// its controller draws at random: a descheduler that weighs pods one by one
// sees the same cluster in every run.
func (m *UsageModel) PodsUsage(pods map[types.UID]Pod, t time.Duration, step int64) map[types.NamespacedName]Amount {
	byNodeWorkload := map[[2]string][]Pod{}
	out := map[types.NamespacedName]Amount{}
	for _, p := range pods {
		w, ok := m.workloads[p.Workload]
		switch {
		case p.Node == "":
		case !ok:
			out[p.Key] = p.Requests
		default:
			k := [2]string{p.Node, w.Name}
			byNodeWorkload[k] = append(byNodeWorkload[k], p)
		}
	}
	for k, ps := range byNodeWorkload {
		var sum Amount
		for _, pu := range m.PodUsages(k[0], map[string]int{k[1]: len(ps)}, t, step) {
			sum = sum.Add(pu.Amount)
		}
		n := float64(len(ps))
		for _, p := range ps {
			out[p.Key] = Amount{CPU: sum.CPU / n, Memory: sum.Memory / n}
		}
	}
	return out
}

// Node is the scenario's node of that name.
func (m *UsageModel) Node(name string) scenario.Node { return m.nodes[name] }

// Workload is the scenario's workload of that name; false when there is none.
func (m *UsageModel) Workload(name string) (scenario.Workload, bool) {
	w, ok := m.workloads[name]
	return w, ok
}

// ChangedBetween reports whether the cluster changed after from and up to
// to: a node joined, was cordoned or uncordoned, a process outside
// Kubernetes started or stopped, or a workload was scaled. A workload's
// usage rising or falling is no change: it is what a load-aware stack must
// live with.
func (m *UsageModel) ChangedBetween(from, to time.Duration) bool {
	for _, t := range m.changes {
		if t > from && t <= to {
			return true
		}
	}
	return false
}
