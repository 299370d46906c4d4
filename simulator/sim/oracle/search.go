package oracle

import (
	"github.com/ballast-sched/ballast/core/placement"
)

// search is the problem as core/placement searches it: one dimension, the
// utilisation a run records.
func (p *problem) search() *placement.Problem {
	out := &placement.Problem{Dims: 1, Workloads: make([]placement.Workload, len(p.workloads)), Nodes: make([]placement.Node, len(p.nodes))}
	for w, wl := range p.workloads {
		out.Workloads[w] = placement.Workload{Name: wl.name, Requests: wl.requests}
	}
	for i, n := range p.nodes {
		adds := make([][][]float64, len(n.adds))
		for w, a := range n.adds {
			if a == nil {
				continue
			}
			adds[w] = make([][]float64, len(a))
			for k, v := range a {
				adds[w][k] = []float64{v}
			}
		}
		out.Nodes[i] = placement.Node{Name: n.name, Base: []float64{n.base}, Allocatable: n.allocatable, Adds: adds}
	}
	return out
}
