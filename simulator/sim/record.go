package sim

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// recorder builds a run's Result from what it is shown: the pods after each
// change, and the nodes at each step. A run on the simulated clock and a
// served cluster record through it alike.
type recorder struct {
	model *usageModel
	// step is the scenario's time between two usage samples.
	step   time.Duration
	result *Result
	// pods are the pods at the last observation.
	pods map[types.UID]placedPod
	// movedTo remembers, per workload, the nodes that received a pod
	// replacing an evicted one; evicting from one of them is ping-pong.
	movedTo map[string]sets.Set[string]
	// replacing counts, per workload, evicted pods whose replacement has
	// not landed yet.
	replacing map[string]int
}

func newRecorder(s *stack, mode Mode) *recorder {
	return &recorder{
		model: s.model, step: s.sc.Step.Duration, result: &Result{Scenario: s.sc.Name, Mode: mode, Step: s.sc.Step.Duration},
		pods: map[types.UID]placedPod{}, movedTo: map[string]sets.Set[string]{}, replacing: map[string]int{},
	}
}

// observe notes the pods at scenario time t. With evicting set, the bound
// pods that vanished since the last observation were evicted by a
// descheduling cycle; the pods of their workloads that land from then on
// replace them. A pod that lands while a hog runs on its node counts as
// placed on the hog.
func (r *recorder) observe(pods map[types.UID]placedPod, t time.Duration, evicting bool) {
	if evicting {
		for uid, p := range r.pods {
			if _, ok := pods[uid]; ok || p.node == "" {
				continue
			}
			r.result.Evictions++
			if r.movedTo[p.workload].Has(p.node) {
				r.result.PingPong++
			}
			r.replacing[p.workload]++
		}
	}
	for uid, p := range pods {
		if old, ok := r.pods[uid]; ok && old.node == p.node || p.node == "" {
			continue
		}
		if r.model.hogged(p.node, t, r.step) {
			r.result.PlacedOnHog++
		}
		if r.replacing[p.workload] > 0 {
			r.replacing[p.workload]--
			if r.movedTo[p.workload] == nil {
				r.movedTo[p.workload] = sets.New[string]()
			}
			r.movedTo[p.workload].Insert(p.node)
		}
	}
	r.pods = pods
}

// addStep appends the cluster at scenario time t.
func (r *recorder) addStep(s Step) { r.result.Steps = append(r.result.Steps, s) }

// finish summarises the result and returns it.
func (r *recorder) finish() *Result {
	r.result.summarize()
	return r.result
}

// recordStep measures every present node's pods, requests and real usage
// (the usage model's at t, step) as a Step.
func (s *stack) recordStep(ctx context.Context, t time.Duration, step int64) (Step, error) {
	states, pending, err := s.nodeStates(ctx, t, step)
	if err != nil {
		return Step{}, err
	}
	rec := Step{At: t, Pending: pending, Nodes: make([]NodeStep, len(states))}
	for i, st := range states {
		rec.Nodes[i] = st.NodeStep
	}
	return rec, nil
}

// nodeState is a node at a step as recorded, and what each of its scenario
// pods uses in percent of the node's allocatable.
type nodeState struct {
	NodeStep
	pods []Amount
}

// nodeStates returns every present node's pods, requests and real usage at
// step (simulated time t), and the number of pods not bound yet.
func (s *stack) nodeStates(ctx context.Context, t time.Duration, step int64) ([]nodeState, int, error) {
	nodes, err := s.c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("listing nodes: %w", err)
	}
	p, err := s.placement(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]nodeState, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		cpuAlloc := float64(n.Status.Allocatable.Cpu().MilliValue()) / 1000
		memAlloc := float64(n.Status.Allocatable.Memory().Value())
		percent := func(a Amount) Amount { return Amount{CPU: 100 * a.CPU / cpuAlloc, Memory: 100 * a.Memory / memAlloc} }
		placed := p.workloads[n.Name]
		total := percent(s.model.baseUsage(n.Name, t).Add(p.other[n.Name]))
		st := nodeState{NodeStep: NodeStep{Node: n.Name, Cordoned: n.Spec.Unschedulable, Workloads: placed}}
		for _, pu := range s.model.PodUsages(n.Name, placed, t, step) {
			share := percent(pu.Amount)
			st.pods = append(st.pods, share)
			total = total.Add(share)
		}
		st.CPU, st.Memory = total.CPU, total.Memory
		for w, count := range placed {
			st.Pods += count
			req := s.model.workloads[w].Requests
			st.CPURequests += 100 * float64(count) * req.CPU.AsApproximateFloat64() / cpuAlloc
			st.MemoryRequests += 100 * float64(count) * req.Memory.AsApproximateFloat64() / memAlloc
		}
		out = append(out, st)
	}
	return out, p.pending, nil
}
