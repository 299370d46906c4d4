package nodeload

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// Usage changes without a cluster event: no informer tells kube-scheduler
// that a node has cooled down, so a pod rejected because every node was hot
// would wait in the unschedulable queue until a pod is deleted, a node is
// added, or the queue's periodic flush (5 minutes by default). A Waiter
// keeps such pods, and the Tracker hands it each new usage snapshot: a pod
// goes back to the active queue (fwk.Handle's Activate) as soon as a node
// that did not pass for it passes.

// WakePeriod is how often the Tracker looks for a new usage snapshot to
// hand its waiters; load-watcher samples every 15 s by default.
const WakePeriod = time.Second

// maxWaiting bounds the pods a Waiter keeps; more wait for the queue's
// flush as they would without it.
const maxWaiting = 10000

// Passes says whether a pod estimated at est passes a node's entry e with
// allocatable alloc, as the plugin's Filter would judge it.
type Passes func(e *NodeEntry, alloc, est loadmodel.Amount) bool

// Waiter keeps the pods one plugin rejected for their nodes' usage.
type Waiter struct {
	tracker *Tracker
	handle  fwk.Handle
	plugin  string
	key     tableKey
	passes  Passes

	mu   sync.Mutex
	pods map[types.UID]*waitingPod
}

type waitingPod struct {
	pod *v1.Pod
	est loadmodel.Amount
	// list and passed are the nodes that passed when the pod was last
	// judged, as a bit per node of list.
	list   *nodeList
	passed []uint64
}

// NewWaiter returns the waiter of plugin, whose Filter reads tables of
// window with pending pods estimated with opts and lets a pod through a
// node when passes says so; pods are activated through h.
func (t *Tracker) NewWaiter(plugin string, h fwk.Handle, window usage.Window, opts loadmodel.EstimateOptions, passes Passes) *Waiter {
	w := &Waiter{tracker: t, handle: h, plugin: plugin, key: tableKey{window: window, opts: opts}, passes: passes, pods: map[types.UID]*waitingPod{}}
	t.wakeMu.Lock()
	t.waiters = append(t.waiters, w)
	t.wakeMu.Unlock()
	return w
}

// Wait keeps pod, estimated at est, which the plugin rejected on some nodes
// of table and which could not be placed, until a node that did not pass
// for it passes.
func (w *Waiter) Wait(pod *v1.Pod, est loadmodel.Amount, table *Table) {
	wp := &waitingPod{pod: pod, est: est}
	wp.judge(w, table)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, known := w.pods[pod.UID]; !known && len(w.pods) >= maxWaiting {
		return
	}
	w.pods[pod.UID] = wp
}

// Forget drops a pod that was placed or deleted.
func (w *Waiter) Forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pods, uid)
}

// Len returns how many pods wait.
func (w *Waiter) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pods)
}

// judge works out which nodes of table pass for the pod, and reports
// whether one passes that did not when it was last judged on the same node
// list.
func (wp *waitingPod) judge(w *Waiter, table *Table) (cooler bool) {
	passed := make([]uint64, (len(table.entries)+63)/64)
	for i := range table.entries {
		if w.passes(table.entries[i].Load(), table.list.alloc[i], wp.est) {
			passed[i/64] |= 1 << (i % 64)
		}
	}
	if wp.list == table.list {
		for i := range passed {
			if passed[i]&^wp.passed[i] != 0 {
				cooler = true
				break
			}
		}
	}
	wp.list, wp.passed = table.list, passed
	return cooler
}

// wake judges the waiting pods on snap and activates those a node now
// passes; they leave the waiter (if rejected again, the plugin keeps them
// again).
func (w *Waiter) wake(ctx context.Context, snap *usage.Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pods) == 0 {
		return
	}
	table := w.tracker.currentTable(snap, w.key)
	if table == nil {
		return
	}
	activate := map[string]*v1.Pod{}
	for uid, wp := range w.pods {
		if wp.judge(w, table) {
			activate[string(uid)] = wp.pod
			delete(w.pods, uid)
		}
	}
	if len(activate) == 0 || w.handle == nil {
		return
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Node usage fell under the thresholds, retrying pods", "plugin", w.plugin, "pods", len(activate))
	w.handle.Activate(logger, activate)
}

// currentTable returns the table of snap for key on the node list of the
// newest scheduling cycle, nil before the first.
func (t *Tracker) currentTable(snap *usage.Snapshot, key tableKey) *Table {
	t.tablesMu.Lock()
	defer t.tablesMu.Unlock()
	if t.list == nil {
		return nil
	}
	return t.tableLocked(snap, key)
}

// StartWaking hands every new usage snapshot to the waiters until ctx is
// done, looking every WakePeriod; only the first call starts it.
func (t *Tracker) StartWaking(ctx context.Context) {
	t.wakeOnce.Do(func() {
		go func() {
			ticker := time.NewTicker(WakePeriod)
			defer ticker.Stop()
			var last *usage.Snapshot
			for {
				select {
				case <-ctx.Done():
					return
				case <-ticker.C:
				}
				snap := t.Snapshot()
				if snap == last {
					continue
				}
				last = snap
				t.wakeMu.Lock()
				waiters := append([]*Waiter(nil), t.waiters...)
				t.wakeMu.Unlock()
				for _, w := range waiters {
					w.wake(ctx, snap)
				}
			}
		}()
	})
}
