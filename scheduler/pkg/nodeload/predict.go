package nodeload

import (
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/loadscore"
)

// NeutralScore is what usage-based scores give a node without usable usage:
// the middle of the range, so the node is neither avoided nor preferred and
// the request-based plugins decide.
const NeutralScore = loadscore.MaxScore / 2

// Allocatable returns a node's allocatable CPU and memory.
func Allocatable(n fwk.NodeInfo) loadscore.Amount {
	a := n.GetAllocatable()
	return loadscore.Amount{MilliCPU: a.GetMilliCPU(), Memory: a.GetMemory()}
}

// Predict appends to preds, for each resource, the node's predicted usage:
// the window's statistic chosen by pick for that resource, plus pending and
// pod amounts. ok is false when a statistic is missing or not a valid
// number. Callers pass a small stack buffer (preds[:0]) so scoring a node
// does not allocate.
func Predict(preds []loadscore.Prediction, nu usage.NodeUsage, window usage.Window, resources []usage.Resource, pick Picker,
	pending, pod, allocatable loadscore.Amount) ([]loadscore.Prediction, bool) {
	for _, r := range resources {
		s, ok := nu.Get(window, r)
		if !ok {
			return nil, false
		}
		p, ok := loadscore.Predict(r, pick(r, s), pending.Of(r), pod.Of(r), allocatable.Of(r))
		if !ok {
			return nil, false
		}
		preds = append(preds, p)
	}
	return preds, true
}

// Picker chooses which number of a window stands for the usage of r.
type Picker func(r usage.Resource, s usage.Stats) float64

// Avg picks a window's mean.
func Avg(_ usage.Resource, s usage.Stats) float64 { return s.Avg }

// P95 picks a window's 95th percentile.
func P95(_ usage.Resource, s usage.Stats) float64 { return s.P95 }

// Latest picks a window's newest sample.
func Latest(_ usage.Resource, s usage.Stats) float64 { return s.Latest }

// PerResource picks, for each resource, the statistic named in stats; the
// mean for a resource it does not name.
func PerResource(stats map[usage.Resource]Picker) Picker {
	return func(r usage.Resource, s usage.Stats) float64 {
		if pick, ok := stats[r]; ok {
			return pick(r, s)
		}
		return s.Avg
	}
}
