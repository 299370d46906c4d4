package loadaware

import (
	"sync"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// Filter and Score read the same figures of a node in one cycle: its entry
// in the cycle's table, its allocatable, the pod's estimate, at the
// cycle's time. So Filter, having predicted a node's usage to judge it,
// works out the node's usage and risk terms of the score as well and keeps
// them, by the node's place in the table, for Score, which then adds the
// free pod slots' term (which depends on the nodes that passed) and reads
// nothing else of the node. Score works a node out itself when Filter did
// not keep it: a node the framework handed as a copy (preemption,
// nominated pods), a cycle without Filter (a pod exempt from the
// thresholds, a profile that enables LoadAware at score alone), or one
// whose score is logged or planned (those need the predictions or the
// entry).

// memo is one cycle's terms, by place in the cycle's table.
type memo struct {
	// cycle stamps the slots this cycle wrote; those of earlier cycles,
	// left in the same array, carry older stamps.
	cycle uint64
	slots []memoSlot
}

type memoSlot struct {
	cycle       uint64
	usage, risk float64
}

// remember keeps the terms of the node of e, at place i of the cycle's
// table, from preds, Filter's predictions of the checked resources (ok as
// predict returns it). Filter calls it for the nodes it lets through,
// each node from one goroutine; Score reads them once Filter is done with
// every node.
func (pl *LoadAware) remember(s *cycle, i int, e *nodeload.NodeEntry, alloc loadmodel.Amount, preds []loadmodel.Prediction, ok bool) {
	if !pl.scoresChecks {
		var buf [2]loadmodel.Prediction
		preds, ok = pl.predict(buf[:0], e, alloc, s.PodEst, pl.figures)
	}
	usage, risk := pl.terms(s, i, e, alloc, preds, ok, klog.Logger{})
	s.memo.slots[i] = memoSlot{cycle: s.memo.cycle, usage: usage, risk: risk}
}

// recall returns the terms Filter kept of the node at place i of the
// cycle's table, and false when it kept none (i is -1 for a node the
// table does not index).
func (m *memo) recall(i int) (usage, risk float64, ok bool) {
	if i < 0 || i >= len(m.slots) {
		return 0, 0, false
	}
	sl := &m.slots[i]
	if sl.cycle != m.cycle {
		return 0, 0, false
	}
	return sl.usage, sl.risk, true
}

// memos hands each cycle a memo over one array, kept from cycle to cycle:
// a scheduling profile runs one pod's cycle at a time, and the stamps
// tell one cycle's slots from another's without clearing them.
type memos struct {
	mu     sync.Mutex
	cycles uint64
	slots  []memoSlot
}

// next returns the memo of a new cycle over a table of n nodes.
func (ms *memos) next(n int) memo {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.cycles++
	if len(ms.slots) < n {
		ms.slots = make([]memoSlot, n)
	}
	return memo{cycle: ms.cycles, slots: ms.slots[:n]}
}
