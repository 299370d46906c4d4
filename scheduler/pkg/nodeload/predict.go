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
// the window's statistic chosen by pick, plus pending and pod amounts. ok is
// false when a statistic is missing or not a valid number. Callers pass a
// small stack buffer (preds[:0]) so scoring a node does not allocate.
func Predict(preds []loadscore.Prediction, nu usage.NodeUsage, window usage.Window, resources []usage.Resource, pick func(usage.Stats) float64,
	pending, pod, allocatable loadscore.Amount) ([]loadscore.Prediction, bool) {
	for _, r := range resources {
		s, ok := nu.Get(window, r)
		if !ok {
			return nil, false
		}
		p, ok := loadscore.Predict(r, pick(s), pending.Of(r), pod.Of(r), allocatable.Of(r))
		if !ok {
			return nil, false
		}
		preds = append(preds, p)
	}
	return preds, true
}

// Avg picks a window's mean.
func Avg(s usage.Stats) float64 { return s.Avg }

// P95 picks a window's 95th percentile.
func P95(s usage.Stats) float64 { return s.P95 }
