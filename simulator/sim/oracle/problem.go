package oracle

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// problem is a scenario's measurement window as numbers: per node, its
// utilisation without pods averaged over the window and its capacity; per
// workload and node, the window-averaged utilisation each successive pod
// adds. Utilisation is the mean of a node's CPU and memory use in percent
// of its allocatable, as a run records it.
type problem struct {
	window    [2]time.Duration
	workloads []workload
	nodes     []node
}

type workload struct {
	name     string
	replicas int
	// requests are millicores, bytes and one pod.
	requests [3]int64
}

// fixedPods are pods of w that nothing moves, counted by node.
type fixedPods struct {
	w  scenario.Workload
	on map[string]int
}

type node struct {
	name string
	// hostable: in the cluster and schedulable when the window starts.
	hostable bool
	// base is the utilisation of the node's background and the processes
	// outside Kubernetes on it, averaged over the window (zero for the steps
	// before it joined).
	base float64
	// allocatable is millicores, bytes and pods.
	allocatable [3]int64
	// adds holds, per workload, the window-averaged utilisation of the
	// node's first, second, … pod of it (the usage model gives each of a
	// workload's pods on a node its own noise); nil where the workload's
	// pods may not go.
	adds [][]float64
}

// newProblem reads sc's measurement window: the last quarter of the steps a
// run records (at least one).
func newProblem(sc *scenario.Scenario) (*problem, error) {
	step := sc.Step.Duration
	if step <= 0 {
		return nil, fmt.Errorf("scenario %s has no step", sc.Name)
	}
	last := int64(sc.Duration.Duration / step)
	first := last + 1 - max((last+1)/4, 1)
	p := &problem{window: [2]time.Duration{time.Duration(first) * step, time.Duration(last) * step}}
	m := model.NewUsageModel(sc)

	// The cluster as the window starts and ends: nodes present and
	// cordoned, replicas.
	present, cordoned, replicas := map[string]bool{}, map[string]bool{}, map[string]int{}
	for _, n := range sc.Nodes {
		present[n.Name], cordoned[n.Name] = !n.Absent, n.Unschedulable
	}
	for _, w := range sc.Workloads {
		replicas[w.Name] = int(w.Replicas)
	}
	apply := func(ev scenario.Event) {
		switch ev.Type {
		case scenario.Join:
			present[ev.Node] = true
		case scenario.Cordon, scenario.Drain:
			cordoned[ev.Node] = true
		case scenario.Uncordon:
			cordoned[ev.Node] = false
		case scenario.Scale:
			replicas[ev.Workload] = int(ev.Replicas)
		}
	}
	timeline := model.NewTimeline(sc)
	for _, ev := range timeline.Due(p.window[0]) {
		apply(ev)
	}
	hostable := map[string]bool{}
	for name, in := range present {
		hostable[name] = in && !cordoned[name] && !m.Down(name, p.window[0])
	}
	// Which steps of the window each node is there for.
	steps := make([]int64, 0, last-first+1)
	presentAt := map[string][]bool{}
	for k := first; k <= last; k++ {
		if k > first {
			for _, ev := range timeline.Due(time.Duration(k) * step) {
				apply(ev)
			}
		}
		steps = append(steps, k)
		for name := range present {
			// A node that is down (rebooting, without power) runs
			// nothing and counts as one not there.
			presentAt[name] = append(presentAt[name], present[name] && !m.Down(name, time.Duration(k)*step))
		}
	}

	// Pods that nothing may move are where they are, as the background
	// is: a DaemonSet's on every node it matches, a StatefulSet's replica
	// on the node its volume already lives on (VolumeNodes). The oracle
	// places the other pods around them: a Deployment's, a StatefulSet's
	// replica whose volume is yet to be made (its first placement is the
	// only one, and the oracle's placement holds for the whole window),
	// and a Job's or CronJob's while it is due to run in the window, its
	// load counted for the steps it runs.
	var fixed []fixedPods
	for _, w := range sc.Workloads {
		switch {
		case w.IsDaemonSet():
			f := fixedPods{w: w, on: map[string]int{}}
			for name := range present {
				if model.Hosts(m.Node(name), w) {
					f.on[name] = 1
				}
			}
			fixed = append(fixed, f)
			continue
		case w.IsStatefulSet():
			f := fixedPods{w: w, on: map[string]int{}}
			pinned := min(len(w.VolumeNodes), replicas[w.Name])
			for _, node := range w.VolumeNodes[:pinned] {
				f.on[node]++
			}
			fixed = append(fixed, f)
			replicas[w.Name] -= pinned
		case w.RunsToCompletion():
			replicas[w.Name] = 0
			for _, k := range steps {
				if w.RunningAt(time.Duration(k) * step) {
					replicas[w.Name] = int(w.Parallelism)
					break
				}
			}
		}
		p.workloads = append(p.workloads, workload{name: w.Name, replicas: replicas[w.Name], requests: [3]int64{
			w.Requests.CPU.MilliValue(), w.Requests.Memory.Value(), 1}})
	}
	slices.SortFunc(p.workloads, func(a, b workload) int { return compareStrings(a.name, b.name) })

	for _, name := range slices.Sorted(maps.Keys(present)) {
		if !slices.Contains(presentAt[name], true) {
			// Not there for any step of the window (yet to join, or
			// without power): no part of a run's spread either.
			continue
		}
		sn := m.Node(name)
		spec := model.NodeSpec(sn).WithDefaults()
		cpu, mem := quantity(spec.CPU), quantity(spec.Memory)
		n := node{name: name, hostable: hostable[name],
			allocatable: [3]int64{cpu.MilliValue(), mem.Value(), spec.Pods}}
		alloc := model.Amount{CPU: float64(cpu.MilliValue()) / 1000, Memory: float64(mem.Value())}
		for i, k := range steps {
			if presentAt[name][i] {
				n.base += utilisation(m.BaseUsage(name, time.Duration(k)*step), alloc)
			}
		}
		for _, f := range fixed {
			count := f.on[name]
			if count == 0 {
				continue
			}
			for i, k := range steps {
				if presentAt[name][i] {
					for _, pu := range m.PodUsages(name, map[string]int{f.w.Name: count}, time.Duration(k)*step, k) {
						n.base += utilisation(pu.Amount, alloc)
					}
				}
			}
			if present[name] {
				for r, q := range [3]int64{f.w.Requests.CPU.MilliValue(), f.w.Requests.Memory.Value(), 1} {
					n.allocatable[r] = max(n.allocatable[r]-int64(count)*q, 0)
				}
			}
		}
		n.base /= float64(len(steps))
		n.adds = make([][]float64, len(p.workloads))
		if n.hostable {
			for wi, w := range p.workloads {
				sw, _ := m.Workload(w.name)
				if !model.Hosts(sn, sw) {
					continue
				}
				most := min(w.replicas, fits(w.requests, n.allocatable))
				if most == 0 {
					continue
				}
				adds := make([]float64, most)
				for _, k := range steps {
					if sw.RunsToCompletion() && !sw.RunningAt(time.Duration(k)*step) {
						continue
					}
					for j, pu := range m.PodUsages(name, map[string]int{w.name: most}, time.Duration(k)*step, k) {
						adds[j] += utilisation(pu.Amount, alloc)
					}
				}
				for j := range adds {
					adds[j] /= float64(len(steps))
				}
				n.adds[wi] = adds
			}
		}
		p.nodes = append(p.nodes, n)
	}
	return p, nil
}

// utilisation is the mean of a's CPU and memory in percent of alloc.
func utilisation(a, alloc model.Amount) float64 {
	return (100*a.CPU/alloc.CPU + 100*a.Memory/alloc.Memory) / 2
}

// fits is how many pods of these requests fit into allocatable alone.
func fits(requests, allocatable [3]int64) int {
	most := -1
	for r := range requests {
		if requests[r] <= 0 {
			continue
		}
		if n := int(allocatable[r] / requests[r]); most < 0 || n < most {
			most = n
		}
	}
	return max(most, 0)
}

func quantity(s string) resource.Quantity { return resource.MustParse(s) }

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
