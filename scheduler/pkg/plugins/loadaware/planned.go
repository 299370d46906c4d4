package loadaware

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
)

// plannedMoves is what LoadAware knows of the descheduler's moves: per
// workload, the moves whose replacement the descheduler has not seen run
// yet (moves.Plans). An informer watches the one ConfigMap the descheduler
// keeps them in and indexes them once per change, so that a pod's plans
// are one map lookup. It starts when the first pod is scored: a scheduler
// built only to check its configuration dials nothing.
type plannedMoves struct {
	// name is the ConfigMap's.
	name     string
	validFor time.Duration
	now      func() time.Time
	plans    atomic.Pointer[map[moves.Workload][]moves.Plan]
	start    func()
	started  sync.Once
	// count is the plans at the last read (planned_moves).
	count prometheus.Gauge

	// mu guards taken: the plans taken by a pod reserved on their node,
	// with the pod that took each. A move has one replacement; the
	// workload's other new pods are placed as any other.
	mu    sync.Mutex
	taken map[planKey]types.UID
}

// planKey names a plan: the pod evicted, and when.
type planKey struct {
	pod types.UID
	at  int64
}

func keyOf(pl moves.Plan) planKey { return planKey{pod: pl.Pod, at: pl.At.UnixNano()} }

// newPlannedMoves watches, once started, the ConfigMap args name through
// client, until ctx ends; plans older than args.ValidFor on now's clock
// are dropped.
func newPlannedMoves(ctx context.Context, client kubernetes.Interface, args *config.PlannedMoves, now func() time.Time, count prometheus.Gauge) (*plannedMoves, error) {
	p := &plannedMoves{name: args.Name, validFor: args.ValidFor.Duration, now: now, taken: map[planKey]types.UID{}, count: count}
	// A list and a watch of that one object by name, which RBAC can grant
	// on it alone (resourceNames).
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(args.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector(metav1.ObjectNameField, args.Name).String()
		}))
	logger := klog.FromContext(ctx).WithValues("plugin", Name, "configMap", klog.KRef(args.Namespace, args.Name))
	_, err := factory.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.read(logger, obj) },
		UpdateFunc: func(_, obj any) { p.read(logger, obj) },
		DeleteFunc: func(any) { p.index(nil) },
	})
	if err != nil {
		return nil, err
	}
	p.start = func() { factory.Start(ctx.Done()) }
	return p, nil
}

// read indexes the moves in the ConfigMap obj. Moves that cannot be read
// plan nothing: the pods are placed as without the descheduler.
func (p *plannedMoves) read(logger klog.Logger, obj any) {
	cm, ok := obj.(*v1.ConfigMap)
	if !ok || cm.Name != p.name {
		return
	}
	saved, err := moves.Decode([]byte(cm.Data[moves.Key]))
	if err != nil {
		logger.Error(err, "Reading the descheduler's moves; no planned destination is favoured until they can be read")
	}
	p.index(saved)
}

// index replaces the plans by those of saved, and forgets the taken plans
// that have gone.
func (p *plannedMoves) index(saved []moves.Saved) {
	plans := moves.Plans(saved, p.now(), p.validFor)
	p.mu.Lock()
	defer p.mu.Unlock()
	live := map[planKey]bool{}
	for _, ps := range plans {
		for _, pl := range ps {
			live[keyOf(pl)] = true
		}
	}
	p.count.Set(float64(len(live)))
	for k := range p.taken {
		if !live[k] {
			delete(p.taken, k)
		}
	}
	p.plans.Store(&plans)
}

// nodes returns the nodes the valid plans of pod's workload name that no
// other pod took; nil for a pod of a workload without plans.
func (p *plannedMoves) nodes(pod *v1.Pod) []string {
	p.started.Do(p.start)
	plans := p.plans.Load()
	if plans == nil || len(*plans) == 0 {
		return nil
	}
	w, ok := moves.WorkloadOf(pod)
	if !ok {
		return nil
	}
	ps := (*plans)[w]
	if len(ps) == 0 {
		return nil
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pl := range ps {
		if by, ok := p.taken[keyOf(pl)]; (!ok || by == pod.UID) && now.Sub(pl.At) < p.validFor {
			out = append(out, pl.Node)
		}
	}
	return out
}

// take records that pod, reserved on node, replaces the oldest plan of its
// workload on node that no other pod took.
func (p *plannedMoves) take(pod *v1.Pod, node string) {
	plans := p.plans.Load()
	w, ok := moves.WorkloadOf(pod)
	if plans == nil || !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range (*plans)[w] {
		if by, ok := p.taken[keyOf(pl)]; pl.Node == node && (!ok || by == pod.UID) {
			p.taken[keyOf(pl)] = pod.UID
			return
		}
	}
}

// release gives back the plan pod took (its placement was abandoned).
func (p *plannedMoves) release(pod types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, by := range p.taken {
		if by == pod {
			delete(p.taken, k)
		}
	}
}
