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
// judged on the same data, its nodes in the plugin's window, the pod's
// estimate, and the cycle's time, at which pending pods are counted. It is
// never modified once built, so Clone shares it.
type Cycle struct {
	Snap   *usage.Snapshot
	Views  *Views
	PodEst loadmodel.Amount
	Now    time.Time
}

// Clone implements fwk.StateData.
func (c *Cycle) Clone() fwk.StateData { return c }

// NewCycle takes the cycle's snapshot and estimates pod with opts for
// plugin, reading nodes in window.
func (t *Tracker) NewCycle(ctx context.Context, plugin string, pod *v1.Pod, window usage.Window, opts loadmodel.EstimateOptions) *Cycle {
	snap := t.Snapshot()
	return &Cycle{Snap: snap, Views: t.Views(snap, window), PodEst: t.EstimatePod(ctx, plugin, pod, opts), Now: t.Now()}
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
