package nodeload

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// A scheduling cycle asks about every node (Filter, Score) for every pod,
// while what it asks changes far less often: a node's usage with each
// load-watcher snapshot, its pending pods when a pod lands on it or leaves
// it. So the answers are worked out when those change, into a Table: one
// NodeEntry per node of the scheduler's snapshot, in the snapshot's order,
// found from the NodeInfo the framework hands the plugin (its address is
// stable: kube-scheduler updates a node's NodeInfo in place from one
// snapshot to the next). A node then costs a plugin one lookup by pointer,
// not a lookup by name in the usage snapshot and another in the pending
// pods.

// nodeList is the scheduler snapshot's node list as the tables index it.
type nodeList struct {
	// infos is the list the index was built from; keeping it keeps its
	// array from being reused for another list.
	infos []fwk.NodeInfo
	pos   nodeIndex
	names []string
	// byName finds a node whose pending pods changed.
	byName map[string]int32
	// alloc is each node's allocatable when the list was indexed: what the
	// usage waker judges nodes by, away from the scheduling cycle, which
	// alone may read NodeInfos.
	alloc []loadmodel.Amount
}

func newNodeList(nodes []fwk.NodeInfo) *nodeList {
	l := &nodeList{
		infos:  nodes,
		names:  make([]string, len(nodes)),
		byName: make(map[string]int32, len(nodes)),
		alloc:  make([]loadmodel.Amount, len(nodes)),
	}
	indexed := make([]*framework.NodeInfo, len(nodes))
	for i, n := range nodes {
		node := n.Node()
		if node == nil {
			continue
		}
		if fi, ok := n.(*framework.NodeInfo); ok {
			indexed[i] = fi
		}
		l.names[i] = node.Name
		l.byName[node.Name] = int32(i)
		l.alloc[i] = Allocatable(n)
	}
	l.pos = newNodeIndex(indexed)
	return l
}

// is reports whether nodes is the list l indexes: the scheduler replaces
// its list whenever a node comes or goes.
func (l *nodeList) is(nodes []fwk.NodeInfo) bool {
	return len(nodes) == len(l.infos) && (len(nodes) == 0 || &nodes[0] == &l.infos[0])
}

// tableKey is what a table's figures depend on besides the usage snapshot
// and the nodes: the window read, and how pending pods are estimated.
type tableKey struct {
	window usage.Window
	opts   loadmodel.EstimateOptions
}

// Table holds, for every node of the scheduler's snapshot, its usage in one
// window of one load-watcher snapshot and what the pods bound since its
// sample add (see PendingPods.Sum). Entries change when a pod lands on a
// node or leaves it; a new snapshot gets a new Table.
type Table struct {
	tracker *Tracker
	key     tableKey
	snap    *usage.Snapshot
	list    *nodeList
	entries []atomic.Pointer[NodeEntry]
	// unavailable are the nodes without usable usage, per set of resources
	// asked about (a bit per resource).
	unavailable [1 << 2]atomic.Pointer[Unavailable]

	loggedMu sync.Mutex
	// logged are the plugins whose unavailable nodes were logged.
	logged map[string]bool
}

// NodeEntry is one node in a Table.
//
// Its fields are laid out for Filter and Score, which read some of them for
// every node and pod, mostly from memory the scheduler has not touched
// since the last pod: an entry is a whole number of cache lines (entries
// of a table are allocated together, large enough to start on a page, or
// one by one in a size class of whole lines), and its statistics are held
// statistic by statistic rather than resource by resource, so that the
// figures the shipped thresholds read (the mean of cpu, the newest sample
// of memory) share the first line with the pending pods and the flags, and
// the variation risk's standard deviations and the cause come in the
// second.
type NodeEntry struct {
	// validUntil is when, in Unix nanoseconds, the first pod Pending
	// counts expires.
	validUntil int64
	// Pending is what the pods bound to the node since its sample add.
	Pending loadmodel.Amount
	// Fresh is true when the node's usage is not stale (nor refused); its
	// numbers may still be missing or invalid for a resource (see Cause).
	Fresh bool
	has   [2]bool
	valid [2]bool
	// The statistics of each resource (by resourceIndex), a usage.Stats
	// split by field.
	avg, latest [2]float64
	std, p95    [2]float64
	// node is the cause that does not depend on the resource: no usage,
	// stale or refused data.
	node    Cause
	max     [2]float64
	samples [2]int
	// Name is the node's name.
	Name string
	// SampleTime is when the node's newest sample was taken.
	SampleTime time.Time
	_          [8]byte // to a whole number of lines
}

// fill reads node's usage in window from snap.
func (e *NodeEntry) fill(snap *usage.Snapshot, node string, window usage.Window) {
	e.Name = node
	nu, ok := usage.NodeUsage{}, false
	if snap != nil {
		nu, ok = snap.Nodes[node]
	}
	switch {
	case !ok:
		e.node = CauseMissing
		return
	case nu.Invalid != "":
		e.node = CauseInvalid
	case nu.Stale:
		e.node = CauseStale
	}
	e.Fresh, e.SampleTime = !nu.Stale, nu.SampleTime
	for i, r := range usage.Resources {
		st, ok := nu.Get(window, r)
		e.has[i] = ok
		e.avg[i], e.latest[i], e.std[i], e.p95[i], e.max[i], e.samples[i] = st.Avg, st.Latest, st.Std, st.P95, st.Max, st.Samples
		e.valid[i] = loadmodel.Valid(st.Avg) && loadmodel.Valid(st.Std) && loadmodel.Valid(st.P95)
	}
}

// ResourceIndex is r's place in usage.Resources, -1 for one load-watcher
// does not measure.
func ResourceIndex(r usage.Resource) int { return resourceIndex(r) }

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
func (e *NodeEntry) Stats(r usage.Resource) (usage.Stats, bool) {
	i := resourceIndex(r)
	if i < 0 || !e.has[i] {
		return usage.Stats{}, false
	}
	return e.StatsAt(i)
}

// StatsAt returns the statistics of the resource at index i of
// usage.Resources (see ResourceIndex), and false when the window has no
// samples of it.
func (e *NodeEntry) StatsAt(i int) (usage.Stats, bool) {
	return usage.Stats{Avg: e.avg[i], Std: e.std[i], Max: e.max[i], P95: e.p95[i], Latest: e.latest[i], Samples: e.samples[i]}, e.has[i]
}

// Figure returns what stat picks of the statistics of the resource at
// index i of usage.Resources (loadmodel.Statistic.Of), and false when the
// window has no samples of it; it reads only that figure.
func (e *NodeEntry) Figure(i int, stat loadmodel.Statistic) (float64, bool) {
	switch stat {
	case loadmodel.Latest:
		return e.latest[i], e.has[i]
	case loadmodel.P95:
		return e.p95[i], e.has[i]
	}
	return e.avg[i], e.has[i]
}

// MeanAndStd returns the mean and standard deviation of the resource at
// index i of usage.Resources; what they are when the window has no samples
// of it is undefined (see Cause).
func (e *NodeEntry) MeanAndStd(i int) (avg, std float64) {
	return e.avg[i], e.std[i]
}

// Cause says why the node's usage cannot be used for resources, as Lookup
// does: no usage, stale or refused data, then, resource by resource, a
// window without samples or a number that is not valid.
func (e *NodeEntry) Cause(resources ...usage.Resource) Cause {
	if e.node != CauseNone {
		return e.node
	}
	for _, r := range resources {
		i := resourceIndex(r)
		if i < 0 || !e.has[i] {
			return CauseMissing
		}
		if !e.valid[i] {
			return CauseInvalid
		}
	}
	return CauseNone
}

// Table returns the table of snap's usage in window, with pending pods
// estimated with opts, for nodes, the scheduler snapshot's whole node list
// (PreFilter's nodes, or the handle's list; see AllNodes). It is built when
// first asked for and kept until a newer snapshot or another node list
// comes.
func (t *Tracker) Table(snap *usage.Snapshot, nodes []fwk.NodeInfo, window usage.Window, opts loadmodel.EstimateOptions) *Table {
	key := tableKey{window: window, opts: opts}
	t.tablesMu.Lock()
	defer t.tablesMu.Unlock()
	if t.list == nil || !t.list.is(nodes) {
		t.list = newNodeList(nodes)
	}
	return t.tableLocked(snap, key)
}

// tableLocked returns the table of snap for key on the tracker's node list;
// the caller holds tablesMu.
func (t *Tracker) tableLocked(snap *usage.Snapshot, key tableKey) *Table {
	kept := t.tables[:0]
	var found *Table
	for _, tb := range t.tables {
		if tb.snap != snap || tb.list != t.list {
			continue // outdated: nothing refreshes it any more
		}
		kept = append(kept, tb)
		if tb.key == key {
			found = tb
		}
	}
	clear(t.tables[len(kept):])
	t.tables = kept
	if found != nil {
		return found
	}
	tb := t.buildLocked(snap, key)
	t.tables = append(t.tables, tb)
	return tb
}

func (t *Tracker) buildLocked(snap *usage.Snapshot, key tableKey) *Table {
	tb := &Table{tracker: t, key: key, snap: snap, list: t.list, entries: make([]atomic.Pointer[NodeEntry], len(t.list.names))}
	slab := make([]NodeEntry, len(t.list.names))
	now := t.now()
	for i, name := range t.list.names {
		e := &slab[i]
		e.fill(snap, name, key.window)
		t.pendingInto(e, now, key)
		tb.entries[i].Store(e)
	}
	return tb
}

// pendingInto works out what e's pending pods add at now.
func (t *Tracker) pendingInto(e *NodeEntry, now time.Time, key tableKey) {
	sum, until := t.pending.SumAt(now, e.Name, e.SampleTime, key.window.Duration(), key.opts)
	e.Pending, e.validUntil = sum, until.UnixNano()
}

// pendingChanged works out again the entries of node, whose pending pods
// changed, in every current table.
func (t *Tracker) pendingChanged(node string) {
	t.tablesMu.Lock()
	defer t.tablesMu.Unlock()
	if t.list == nil {
		return
	}
	i, ok := t.list.byName[node]
	if !ok {
		return
	}
	now := t.now()
	for _, tb := range t.tables {
		tb.refreshLocked(i, now)
	}
}

// refreshLocked replaces entry i with one whose pending pods are counted at
// now; the caller holds the tracker's tablesMu.
func (tb *Table) refreshLocked(i int32, now time.Time) *NodeEntry {
	e := *tb.entries[i].Load()
	tb.tracker.pendingInto(&e, now, tb.key)
	tb.entries[i].Store(&e)
	return &e
}

// Node returns the entry of the node of nodeInfo, its pending pods counted
// at now (Unix nanoseconds, the cycle's time). A NodeInfo that is not the
// scheduler snapshot's own (a copy made for preemption or nominated pods)
// is looked up by name and worked out anew.
func (tb *Table) Node(nodeInfo fwk.NodeInfo, now int64) *NodeEntry {
	_, e := tb.Find(nodeInfo, now)
	return e
}

// Find is Node, and also returns the node's place in the table (see Pos).
func (tb *Table) Find(nodeInfo fwk.NodeInfo, now int64) (int, *NodeEntry) {
	if i := tb.Pos(nodeInfo); i >= 0 {
		return i, tb.At(i, now)
	}
	return -1, tb.ByName(nodeInfo.Node().Name, now)
}

// Pos returns the place of the node of nodeInfo in the table (and in every
// table of the same snapshot), -1 when nodeInfo is not the scheduler
// snapshot's own.
//
// A NodeInfo of the scheduler's snapshot stands for one node for as long
// as it lives: kube-scheduler updates it in place and gives a node that
// comes back a new one, and the list the table indexes keeps the old ones
// alive, so their addresses are not reused. Its address alone finds the
// node, without reading its name.
func (tb *Table) Pos(nodeInfo fwk.NodeInfo) int {
	fi, ok := nodeInfo.(*framework.NodeInfo)
	if !ok {
		return -1
	}
	return tb.list.pos.find(fi)
}

// Len returns how many nodes the table holds.
func (tb *Table) Len() int { return len(tb.entries) }

// At returns entry i (see Pos), its pending pods counted at now.
func (tb *Table) At(i int, now int64) *NodeEntry {
	if e := tb.entries[i].Load(); now < e.validUntil {
		return e
	}
	// A pod it counts has expired since.
	tb.tracker.tablesMu.Lock()
	defer tb.tracker.tablesMu.Unlock()
	return tb.refreshLocked(int32(i), time.Unix(0, now))
}

// Usage returns entry i as it is, for its usage: what its pending pods add
// may be out of date (see At).
func (tb *Table) Usage(i int) *NodeEntry { return tb.entries[i].Load() }

// ByName works out the entry of node, which the table may not hold, at now.
func (tb *Table) ByName(node string, now int64) *NodeEntry {
	e := &NodeEntry{}
	e.fill(tb.snap, node, tb.key.window)
	tb.tracker.pendingInto(e, time.Unix(0, now), tb.key)
	return e
}

// Unavailable returns the nodes of the table whose usage cannot be used for
// resources, and why, worked out once per table.
func (tb *Table) Unavailable(resources ...usage.Resource) *Unavailable {
	mask := 0
	for _, r := range resources {
		if i := resourceIndex(r); i >= 0 {
			mask |= 1 << i
		}
	}
	if u := tb.unavailable[mask].Load(); u != nil {
		return u
	}
	u := &Unavailable{}
	for i := range tb.entries {
		e := tb.entries[i].Load()
		if c := e.Cause(resources...); c != CauseNone {
			u.Add(e.Name, c)
		}
	}
	tb.unavailable[mask].Store(u)
	return u
}

// Report accounts for the nodes whose usage plugin cannot use for pod
// (Unavailable): it counts them in the metric and emits one event per pod
// and cause, as Tracker.Report does, and logs them at V(2) once per table
// and plugin rather than once per pod.
func (tb *Table) Report(ctx context.Context, h fwk.Handle, plugin string, pod *v1.Pod, resources ...usage.Resource) {
	u := tb.Unavailable(resources...)
	if len(u.Nodes) == 0 {
		return
	}
	tb.loggedMu.Lock()
	first := !tb.logged[plugin]
	if first {
		if tb.logged == nil {
			tb.logged = map[string]bool{}
		}
		tb.logged[plugin] = true
	}
	tb.loggedMu.Unlock()
	tb.tracker.report(ctx, h, plugin, pod, *u, first)
}

// AllNodes returns the scheduler snapshot's node list through h, the list
// a Table indexes; fallback when h has none (tests without a snapshot).
func AllNodes(h fwk.Handle, fallback []fwk.NodeInfo) []fwk.NodeInfo {
	if h == nil || h.SnapshotSharedLister() == nil {
		return fallback
	}
	nodes, err := h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return fallback
	}
	return nodes
}
