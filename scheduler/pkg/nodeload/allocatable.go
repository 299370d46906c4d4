package nodeload

import (
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// NeutralScore is what usage-based scores give a node without usable usage:
// the middle of the range, so the node is neither avoided nor preferred and
// the request-based plugins decide.
const NeutralScore = loadmodel.MaxScore / 2

// Allocatable returns a node's allocatable CPU and memory.
func Allocatable(n fwk.NodeInfo) loadmodel.Amount {
	a := n.GetAllocatable()
	return loadmodel.Amount{MilliCPU: a.GetMilliCPU(), Memory: a.GetMemory()}
}
