package record

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// Recorder builds a run's Result from what it is shown: the pods after each
// change, and the nodes at each step. A run on the simulated clock and a
// served cluster record through it alike.
type Recorder struct {
	model *model.UsageModel
	// step is the scenario's time between two usage samples.
	step   time.Duration
	result *Result
	// pods are the pods at the last observation.
	pods map[types.UID]model.Pod
	// movedTo remembers, per workload, the nodes that received a pod
	// replacing an evicted one and when they last did; evicting from one
	// of them is ping-pong.
	movedTo map[string]map[string]time.Duration
	// replacing counts, per workload, evicted pods whose replacement has
	// not landed yet.
	replacing map[string]int
	// why is what the descheduler said of the moves of its last cycle, by
	// evicted pod.
	why map[types.UID]string
	// planned are the destinations the descheduler planned for the pods
	// it evicted, by pod (Plan).
	planned map[types.UID]string
}

// Plan notes where the descheduler planned the replacements of the pods it
// evicts, by evicted pod, for the next Observe that sees them gone.
func (r *Recorder) Plan(planned map[types.UID]string) { r.planned = planned }

// NewRecorder records a run of sc in mode, on the usage model m, judging
// hot nodes by thresholds.
func NewRecorder(m *model.UsageModel, sc *scenario.Scenario, mode model.Mode, thresholds Thresholds) *Recorder {
	return &Recorder{
		model: m, step: sc.Step.Duration,
		result: &Result{Scenario: sc.Name, Mode: mode, Step: sc.Step.Duration, Thresholds: thresholds},
		pods:   map[types.UID]model.Pod{}, movedTo: map[string]map[string]time.Duration{}, replacing: map[string]int{},
	}
}

// Explain hands the recorder what the descheduler said of its moves, by
// evicted pod, before the Observe that finds them evicted.
func (r *Recorder) Explain(why map[types.UID]string) { r.why = why }

// Observe notes the pods at scenario time t. With evicting set, the bound
// pods that vanished since the last observation were evicted by a
// descheduling cycle; the pods of their workloads that land from then on
// replace them. A pod that lands while a hog runs on its node counts as
// placed on the hog.
func (r *Recorder) Observe(pods map[types.UID]model.Pod, t time.Duration, evicting bool) {
	if evicting {
		// In an order that does not depend on the map's: the moves are
		// part of the result's digest.
		var evicted []model.Pod
		why, planned := map[types.NamespacedName]string{}, map[types.NamespacedName]string{}
		for uid, p := range r.pods {
			if _, ok := pods[uid]; !ok && p.Node != "" {
				evicted = append(evicted, p)
				why[p.Key], planned[p.Key] = r.why[uid], r.planned[uid]
			}
		}
		sortPods(evicted)
		for _, p := range evicted {
			r.result.Evictions++
			if w, ok := r.model.Workload(p.Workload); ok && !w.Movable() {
				// A DaemonSet's, StatefulSet's or Job's pod: nothing may
				// move it (its volume pins it, or it ends by itself).
				r.result.UnmovableMoves++
			}
			move := Move{At: t, Pod: p.Key.String(), Workload: p.Workload, From: p.Node, Why: why[p.Key], Planned: planned[p.Key]}
			if received, ok := r.movedTo[p.Workload][p.Node]; ok {
				r.result.PingPong++
				if r.model.ChangedBetween(received, t) {
					r.result.ReMoves++
					move.Undid = MoveReMove
				} else {
					r.result.Loops++
					move.Undid = MoveLoop
				}
			}
			r.result.Moves = append(r.result.Moves, move)
			r.replacing[p.Workload]++
		}
		r.planned = nil
	}
	var arrived []model.Pod
	for uid, p := range pods {
		if old, ok := r.pods[uid]; !(ok && old.Node == p.Node) && p.Node != "" {
			arrived = append(arrived, p)
		}
	}
	sortPods(arrived)
	for _, p := range arrived {
		if r.model.Hogged(p.Node, t, r.step) {
			r.result.PlacedOnHog++
		}
		if r.replacing[p.Workload] > 0 {
			r.replacing[p.Workload]--
			r.landed(p)
			if r.movedTo[p.Workload] == nil {
				r.movedTo[p.Workload] = map[string]time.Duration{}
			}
			r.movedTo[p.Workload][p.Node] = t
		}
	}
	r.pods = pods
}

// sortPods orders pods by workload, node and name.
func sortPods(pods []model.Pod) {
	slices.SortFunc(pods, func(a, b model.Pod) int {
		return cmp.Or(strings.Compare(a.Workload, b.Workload), strings.Compare(a.Node, b.Node), strings.Compare(a.Key.String(), b.Key.String()))
	})
}

// landed gives the node p landed on to a move of p's workload still
// without a replacement: the earliest planned there, else the earliest. A
// new pod replaces none in particular of its workload's evicted pods.
func (r *Recorder) landed(p model.Pod) {
	first := -1
	for i := range r.result.Moves {
		if m := &r.result.Moves[i]; m.Workload == p.Workload && m.To == "" {
			if m.Planned == p.Node {
				m.To = p.Node
				return
			}
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		r.result.Moves[first].To = p.Node
	}
}

// AddStep appends the cluster at one scenario time.
func (r *Recorder) AddStep(s Step) { r.result.Steps = append(r.result.Steps, s) }

// Result is the result being recorded, for the figures counted outside the
// recorder (evictions off hot nodes, cycles spent hot).
func (r *Recorder) Result() *Result { return r.result }

// Finish summarises the result and returns it.
func (r *Recorder) Finish() *Result {
	r.result.Summarize()
	for _, p := range r.pods {
		if w, ok := r.model.Workload(p.Workload); ok && p.Node == "" && w.IsStatefulSet() {
			r.result.Summary.WaitingForVolume++
		}
	}
	return r.result
}

// NodeState is a node at a step as recorded, and what each of its scenario
// pods uses in percent of the node's allocatable.
type NodeState struct {
	NodeStep
	pods []model.Amount
}

// NodeStates returns every node's pods, requests and real usage (the usage
// model m's at step, simulated time t), and the number of pods not bound
// yet.
func NodeStates(nodes []corev1.Node, pods map[types.UID]model.Pod, m *model.UsageModel, t time.Duration, step int64) ([]NodeState, int) {
	p := model.PlacementOf(pods)
	out := make([]NodeState, 0, len(nodes))
	for _, n := range nodes {
		cpuAlloc := float64(n.Status.Allocatable.Cpu().MilliValue()) / 1000
		memAlloc := float64(n.Status.Allocatable.Memory().Value())
		percent := func(a model.Amount) model.Amount {
			return model.Amount{CPU: 100 * a.CPU / cpuAlloc, Memory: 100 * a.Memory / memAlloc}
		}
		placed := p.Workloads[n.Name]
		total := percent(m.BaseUsage(n.Name, t).Add(p.Other[n.Name]))
		st := NodeState{NodeStep: NodeStep{Node: n.Name, Cordoned: n.Spec.Unschedulable, Down: m.Down(n.Name, t), Workloads: placed}}
		for _, pu := range m.PodUsages(n.Name, placed, t, step) {
			share := percent(pu.Amount)
			st.pods = append(st.pods, share)
			total = total.Add(share)
		}
		st.CPU, st.Memory = total.CPU, total.Memory
		// Summed whole (millicores, bytes), then divided: a sum of
		// fractions in the map's order would differ in its last bit from
		// run to run, and with it the result's digest.
		var cpuMilli, memBytes int64
		for w, count := range placed {
			st.Pods += count
			wl, _ := m.Workload(w)
			cpuMilli += int64(count) * wl.Requests.CPU.MilliValue()
			memBytes += int64(count) * wl.Requests.Memory.Value()
		}
		st.CPURequests = 100 * float64(cpuMilli) / 1000 / cpuAlloc
		st.MemoryRequests = 100 * float64(memBytes) / memAlloc
		out = append(out, st)
	}
	return out, p.Pending
}

// StepOf is the step at scenario time t of the nodes' states, with pending
// pods not bound yet.
func StepOf(states []NodeState, pending int, t time.Duration) Step {
	rec := Step{At: t, Pending: pending, Nodes: make([]NodeStep, len(states))}
	for i, st := range states {
		rec.Nodes[i] = st.NodeStep
	}
	return rec
}
