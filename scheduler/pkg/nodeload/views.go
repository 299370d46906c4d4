package nodeload

import (
	"time"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// Views are the nodes of one usage snapshot in one window, read out once:
// a plugin asks about every node for every pod, and a snapshot serves many
// pods. A nil *Views has no node.
type Views struct {
	snap   *usage.Snapshot
	window usage.Window
	nodes  map[string]*NodeView
}

// NodeView is one node's usage in one window.
type NodeView struct {
	// Fresh is true when the node's usage is not stale (nor refused); its
	// numbers may still be missing or invalid for a resource (see Cause).
	Fresh bool
	// SampleTime is when the node's newest sample was taken.
	SampleTime time.Time
	// node is the cause that does not depend on the resource: stale or
	// refused data.
	node  Cause
	stats [2]usage.Stats // by resourceIndex
	has   [2]bool
	valid [2]bool
}

func newViews(snap *usage.Snapshot, window usage.Window) *Views {
	vs := &Views{snap: snap, window: window, nodes: make(map[string]*NodeView, len(snap.Nodes))}
	for name, nu := range snap.Nodes {
		v := &NodeView{Fresh: !nu.Stale, SampleTime: nu.SampleTime}
		switch {
		case nu.Invalid != "":
			v.node = CauseInvalid
		case nu.Stale:
			v.node = CauseStale
		}
		for i, r := range usage.Resources {
			st, ok := nu.Get(window, r)
			v.stats[i], v.has[i] = st, ok
			v.valid[i] = loadmodel.Valid(st.Avg) && loadmodel.Valid(st.Std) && loadmodel.Valid(st.P95)
		}
		vs.nodes[name] = v
	}
	return vs
}

// Node returns the view of a node of the snapshot, false when the snapshot
// has no usage of it.
func (vs *Views) Node(name string) (*NodeView, bool) {
	if vs == nil {
		return nil, false
	}
	v, ok := vs.nodes[name]
	return v, ok
}

// resourceIndex is r's place in usage.Resources, -1 for one load-watcher
// does not measure.
func resourceIndex(r usage.Resource) int {
	switch r {
	case usage.CPU:
		return 0
	case usage.Memory:
		return 1
	}
	return -1
}

// Stats returns the statistics of r, and false when the window has no
// samples of it.
func (v *NodeView) Stats(r usage.Resource) (usage.Stats, bool) {
	i := resourceIndex(r)
	if i < 0 || !v.has[i] {
		return usage.Stats{}, false
	}
	return v.stats[i], true
}

// Cause says why the node's usage cannot be used for resources, as Lookup
// does: stale or refused data, then, resource by resource, a window without
// samples or a number that is not valid.
func (v *NodeView) Cause(resources ...usage.Resource) Cause {
	if v.node != CauseNone {
		return v.node
	}
	for _, r := range resources {
		i := resourceIndex(r)
		if i < 0 || !v.has[i] {
			return CauseMissing
		}
		if !v.valid[i] {
			return CauseInvalid
		}
	}
	return CauseNone
}
