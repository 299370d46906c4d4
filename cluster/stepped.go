package cluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// StepGateName is the PreEnqueue plugin a stepped scheduler's profiles run:
// it lets a pod into the active queue only while Schedule lets it try.
const StepGateName = "StepGate"

// steppedUnschedulableFor keeps kube-scheduler from retrying a pod on its own
// after this long in its unschedulable queue (--pod-max-in-unschedulable-pods-
// duration, 5 minutes of real time by default): a stepped scheduler's pods are
// retried when Schedule says, whatever the machine's speed.
const steppedUnschedulableFor = 30 * 24 * time.Hour

// SteppedScheduler is a kube-scheduler that places pods only when Schedule
// runs, a round at a time, in an order that depends on nothing but the
// cluster's state: what a simulation needs to give the same answer twice.
//
// Outside Schedule every pod waits at a gate (a PreEnqueue plugin in every
// profile). A round first waits until the scheduler's cache holds exactly
// the API server's nodes and bound pods and its queue every pending pod,
// then lets each pending pod through the gate once, and waits until each
// has been bound or found unschedulable; rounds repeat until one binds
// nothing. The configuration gets parallelism 1, so that nodes that score
// alike are ranked in the snapshot's order rather than in the order
// parallel filters finish; kube-scheduler's own periodic retry of
// unschedulable pods is pushed beyond any run; and the gate, a PreFilter
// plugin too that signs no pod, turns off opportunistic batching, whose
// reuse of a pod's sorted nodes for the next expires after half a second of
// real time.
type SteppedScheduler struct {
	*Scheduler
	c     *Cluster
	sched *scheduler.Scheduler
	gate  *stepGate
	rank  func(*corev1.Pod) int
}

// StartSteppedScheduler runs kube-scheduler as StartScheduler does, stepped,
// and returns once its informers have synced. Create the cluster's nodes
// after it: the scheduler keeps nodes in the order it learns of them and
// ranks nodes that score alike in that order, and nodes that exist when it
// starts reach it in a random one.
func (c *Cluster) StartSteppedScheduler(ctx context.Context, configYAML string, registry frameworkruntime.Registry) (*SteppedScheduler, error) {
	gate := &stepGate{}
	withGate := frameworkruntime.Registry{StepGateName: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return gate, nil
	}}
	if err := withGate.Merge(registry); err != nil {
		return nil, err
	}
	s, sched, err := c.startScheduler(ctx, configYAML, true, withGate)
	if err != nil {
		return nil, err
	}
	return &SteppedScheduler{Scheduler: s, c: c, sched: sched, gate: gate}, nil
}

// Schedule runs rounds until one binds nothing, and returns how many pods
// were bound.
func (s *SteppedScheduler) Schedule(ctx context.Context) (int, error) {
	total := 0
	for {
		bound, err := s.round(ctx)
		if err != nil {
			return total, err
		}
		total += bound
		if bound == 0 {
			return total, nil
		}
	}
}

// round lets every pending pod try once.
func (s *SteppedScheduler) round(ctx context.Context) (int, error) {
	var pending []*corev1.Pod
	if err := s.poll(ctx, "the scheduler's cache and queue to hold the API server's nodes and pods", func(ctx context.Context) (bool, error) {
		var err error
		pending, err = s.synced(ctx)
		return pending != nil, err
	}); err != nil {
		return 0, err
	}
	if len(pending) == 0 {
		return 0, nil
	}
	try := make(map[string]*corev1.Pod, len(pending))
	for _, p := range pending {
		try[string(p.UID)] = p
	}
	s.gate.open(try)
	defer s.gate.close()
	// One at a time in queueOrder: each pod is let in and activated only
	// once the scheduler has begun the cycle of the one before (the gate's
	// PreFilter), so it pops them in that order however the two goroutines
	// interleave. The gate lets each in only once the round has come to it:
	// a plugin that activates pods itself (as LoadAware does when a node
	// cools down) cannot slip one in ahead of its turn.
	logger := klog.FromContext(ctx)
	for _, p := range s.queueOrder(pending) {
		uid := string(p.UID)
		begun := s.gate.let(uid)
		s.sched.SchedulingQueue.Activate(logger, map[string]*corev1.Pod{uid: p})
		if err := s.begun(ctx, p, begun); err != nil {
			return 0, err
		}
	}
	if err := s.poll(ctx, "every pending pod to be tried once", s.tried); err != nil {
		return 0, err
	}
	pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing pods: %w", err)
	}
	bound := 0
	for _, p := range pods.Items {
		if _, ok := try[string(p.UID)]; ok && p.Spec.NodeName != "" {
			bound++
		}
	}
	return bound, nil
}

// SetRank makes rank part of the order in which a round lets pods try:
// among pods of one priority, those of a lower rank go first, and the
// queue's own order decides within a rank. Without it, the queue's order
// alone decides: the time each pod entered the queue, which, when several
// controllers make pods at once (a node's pods replaced while a workload
// scales), follows the controllers' goroutines and differs from run to run.
// A caller that knows which workload each pod belongs to ranks them, and the
// same cluster gives the same placement. Set it before the first Schedule.
func (s *SteppedScheduler) SetRank(rank func(*corev1.Pod) int) { s.rank = rank }

// queueOrder sorts pods as the scheduling queue does (priority, then the
// time each entered the queue or last failed: the queue-sort plugin every
// profile shares), with the rank (SetRank) between the two.
func (s *SteppedScheduler) queueOrder(pods []*corev1.Pod) []*corev1.Pod {
	type queued struct {
		pod  *corev1.Pod
		info fwk.QueuedPodInfo
		rank int
	}
	var less fwk.LessFunc
	qs := make([]queued, 0, len(pods))
	for _, p := range pods {
		info, ok := s.sched.SchedulingQueue.GetPod(p.Name, p.Namespace)
		if !ok {
			continue
		}
		if less == nil {
			less = s.sched.Profiles[p.Spec.SchedulerName].QueueSortFunc()
		}
		q := queued{pod: p, info: info}
		if s.rank != nil {
			q.rank = s.rank(p)
		}
		qs = append(qs, q)
	}
	sort.SliceStable(qs, func(i, j int) bool {
		if pi, pj := corev1helpers.PodPriority(qs[i].pod), corev1helpers.PodPriority(qs[j].pod); pi != pj {
			return pi > pj
		}
		if qs[i].rank != qs[j].rank {
			return qs[i].rank < qs[j].rank
		}
		return less(qs[i].info, qs[j].info)
	})
	out := make([]*corev1.Pod, len(qs))
	for i, q := range qs {
		out[i] = q.pod
	}
	return out
}

// begun waits until the scheduler has begun p's scheduling cycle (begun is
// closed), or p has left the queue another way (deleted meanwhile).
func (s *SteppedScheduler) begun(ctx context.Context, p *corev1.Pod, begun <-chan struct{}) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.NewTimer(stepTimeout)
	defer timeout.Stop()
	for {
		select {
		case <-begun:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("waiting for pod %s/%s to be tried: %w", p.Namespace, p.Name, context.Cause(ctx))
		case <-timeout.C:
			return fmt.Errorf("waiting for pod %s/%s to be tried: no scheduling cycle began in %s", p.Namespace, p.Name, stepTimeout)
		case <-tick.C:
			if _, queued := s.sched.SchedulingQueue.GetPod(p.Name, p.Namespace); !queued {
				return nil
			}
		}
	}
}

// tried reports whether every pod let through this round has been tried: the
// gate has let each in, and none is queued, being scheduled or bound but not
// yet confirmed by the informer.
func (s *SteppedScheduler) tried(context.Context) (bool, error) {
	q := s.sched.SchedulingQueue
	return s.gate.allEntered() && len(q.PodsInActiveQ()) == 0 && len(q.InFlightPods()) == 0 &&
		s.sched.Cache.Dump().AssumedPods.Len() == 0, nil
}

// synced returns the pending pods this scheduler places once its cache holds
// every node at the API server's version and exactly the API server's bound
// pods, at their versions, on each, and its queue holds every pending pod;
// nil while it does not.
func (s *SteppedScheduler) synced(ctx context.Context) ([]*corev1.Pod, error) {
	nodes, err := s.c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil
	}
	pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil
	}
	dump := s.sched.Cache.Dump()
	if dump.AssumedPods.Len() > 0 || len(dump.Nodes) != len(nodes.Items) {
		return nil, nil
	}
	cached := map[types.UID]string{}
	for _, n := range nodes.Items {
		info, ok := dump.Nodes[n.Name]
		if !ok || info.Node() == nil || info.Node().ResourceVersion != n.ResourceVersion {
			return nil, nil
		}
		for _, p := range info.GetPods() {
			cached[p.GetPod().UID] = p.GetPod().ResourceVersion
		}
	}
	pending := []*corev1.Pod{}
	bound := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			// Over (a Job's): the scheduler watches no finished pod.
		case p.Spec.NodeName != "":
			if cached[p.UID] != p.ResourceVersion {
				return nil, nil
			}
			bound++
		case p.DeletionTimestamp != nil:
		case len(p.Spec.SchedulingGates) > 0:
			// Waits for whoever gated it, not for a step.
		case s.sched.Profiles[p.Spec.SchedulerName] != nil:
			if _, queued := s.sched.SchedulingQueue.GetPod(p.Name, p.Namespace); !queued {
				return nil, nil
			}
			pending = append(pending, p)
		}
	}
	if bound != len(cached) {
		return nil, nil
	}
	return pending, nil
}

// stepTimeout bounds each wait of a round: the cluster runs in this process
// and answers in milliseconds, so a wait this long means a part is stuck.
const stepTimeout = 5 * time.Minute

// poll waits for done, naming what it waited for when it gives up.
func (s *SteppedScheduler) poll(ctx context.Context, what string, done wait.ConditionWithContextFunc) error {
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, stepTimeout, true, done); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// stepGate is the PreEnqueue plugin of a stepped scheduler: it lets a pod
// into the active queue only while it is open for that pod, once per
// opening, and only after the round has let it.
type stepGate struct {
	mu sync.Mutex
	// waiting are the pods of the open round that have not gone in yet, by
	// UID.
	waiting sets.Set[string]
	// turn are the pods of waiting whose turn has come.
	turn sets.Set[string]
	// begun are closed as the pods of the round, by UID, begin their
	// scheduling cycle (PreFilter).
	begun map[string]chan struct{}
}

var (
	_ fwk.PreEnqueuePlugin  = &stepGate{}
	_ fwk.PreFilterPlugin   = &stepGate{}
	_ fwk.EnqueueExtensions = &stepGate{}
)

func (g *stepGate) Name() string { return StepGateName }

// PreEnqueue lets a pod in once while the gate is open for it and its turn
// has come.
func (g *stepGate) PreEnqueue(_ context.Context, p *corev1.Pod) *fwk.Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.turn.Has(string(p.UID)) {
		g.turn.Delete(string(p.UID))
		g.waiting.Delete(string(p.UID))
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "waiting for the next scheduling step")
}

// PreFilter says the pod's scheduling cycle has begun, and otherwise does
// nothing: a PreFilter plugin that does not sign pods keeps the profile from
// batching them (see SteppedScheduler).
func (g *stepGate) PreFilter(_ context.Context, _ fwk.CycleState, p *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, ok := g.begun[string(p.UID)]; ok {
		close(ch)
		delete(g.begun, string(p.UID))
	}
	return nil, fwk.NewStatus(fwk.Skip)
}

// PreFilterExtensions is nil: the gate keeps no state to update.
func (g *stepGate) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// EventsToRegister is empty: no cluster event opens the gate, only Schedule.
func (g *stepGate) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}

func (g *stepGate) open(pods map[string]*corev1.Pod) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting, g.turn, g.begun = sets.KeySet(pods), sets.New[string](), map[string]chan struct{}{}
}

// let lets the pod of uid in when it is one the gate is open for, and
// returns what is closed when its scheduling cycle begins.
func (g *stepGate) let(uid string) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := make(chan struct{})
	if g.waiting.Has(uid) {
		g.turn.Insert(uid)
		g.begun[uid] = ch
	} else {
		close(ch)
	}
	return ch
}

func (g *stepGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting, g.turn, g.begun = nil, nil, nil
}

// allEntered reports whether every pod the gate was opened for has gone in.
func (g *stepGate) allEntered() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting.Len() == 0
}
