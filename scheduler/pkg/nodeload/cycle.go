package nodeload

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// Cycle is what one scheduling cycle of a usage-reading plugin shares
// between its extension points: one usage snapshot, so that every node is
// judged on the same data, the table of its nodes in the plugin's window,
// the pod's estimate, and the cycle's time, at which pending pods are
// counted. It is never modified once built, so Clone shares it.
type Cycle struct {
	Snap   *usage.Snapshot
	Table  *Table
	PodEst loadmodel.Amount
	Now    time.Time
	// NowNano is Now in Unix nanoseconds, as Table.Node takes it.
	NowNano int64
}

// Clone implements fwk.StateData.
func (c *Cycle) Clone() fwk.StateData { return c }

// NewCycle takes the cycle's snapshot and its table of nodes, the
// scheduler snapshot's whole list (see AllNodes), in window with pending
// pods estimated with opts, and estimates pod with opts for plugin.
func (t *Tracker) NewCycle(ctx context.Context, plugin string, pod *v1.Pod, nodes []fwk.NodeInfo, window usage.Window, opts loadmodel.EstimateOptions) *Cycle {
	snap := t.Snapshot()
	now := t.Now()
	return &Cycle{
		Snap:    snap,
		Table:   t.Table(snap, nodes, window, opts),
		PodEst:  t.EstimatePod(ctx, plugin, pod, opts),
		Now:     now,
		NowNano: now.UnixNano(),
	}
}

// ReadCycle returns the Cycle plugin wrote into cs under its name, and
// false when there is none.
func ReadCycle(cs fwk.CycleState, plugin string) (*Cycle, bool) {
	d, err := cs.Read(fwk.StateKey(plugin))
	if err != nil {
		return nil, false
	}
	c, ok := d.(*Cycle)
	return c, ok
}

// WriteCycle stores c in cs under plugin's name.
func WriteCycle(cs fwk.CycleState, plugin string, c *Cycle) { cs.Write(fwk.StateKey(plugin), c) }
