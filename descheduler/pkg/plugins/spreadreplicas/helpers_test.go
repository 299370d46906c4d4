package spreadreplicas

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

const mib = balancetest.MiB

// The builders and the usage source every balance plugin's tests share.
var (
	node  = balancetest.Node
	loads = balancetest.Loads
)

type staticSource = balancetest.StaticSource

func cordoned(n *v1.Node) { n.Spec.Unschedulable = true }

var created = balancetest.Created

// replica is a pod of ReplicaSet rs requesting 100m CPU (2.5 %) and 40 MiB (4 %).
// Ballast's scheduler placed it.
func replica(name, nodeName, rs string) *v1.Pod {
	return balancetest.Pod(name, nodeName, rs, 40)
}

// replicaPods returns n replicas of rs on nodeName, named rs-nodeName-i.
func replicaPods(rs, nodeName string, n int) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		out = append(out, replica(fmt.Sprintf("%s-%s-%d", rs, nodeName, i), nodeName, rs))
	}
	return out
}

// harness runs the plugin over a fake clientset whose evictions delete the
// pod, as the Eviction API does.
type harness struct {
	t   testing.TB
	ctx context.Context
	*balancetest.Cluster
	plugin  *SpreadReplicas
	source  *staticSource
	clock   *testingclock.FakeClock
	metrics *balance.Metrics
	store   *balance.Store
	nodes   []*v1.Node
	// podUsage is what the metrics API reports for every pod; zero means
	// no metrics.
	podUsage loadmodel.Amount
}

func newHarness(t testing.TB, args *SpreadReplicasArgs, nodes []*v1.Node, pods ...*v1.Pod) *harness {
	t.Helper()
	return newHarnessWith(t, args, nodes, nil, pods...)
}

// newHarnessWith is newHarness with objects of other kinds in the cluster
// (claims, volumes).
func newHarnessWith(t testing.TB, args *SpreadReplicasArgs, nodes []*v1.Node, objs []runtime.Object, pods ...*v1.Pod) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cluster := balancetest.NewClusterOf(t, nodes, pods)
	for _, o := range objs {
		if err := cluster.Client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	h := &harness{t: t, ctx: ctx, Cluster: cluster, source: &staticSource{},
		clock:   testingclock.NewFakeClock(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)),
		metrics: balance.NewMetrics(), store: balance.NewStore(), nodes: nodes}
	metrics.NewKubeRegistry().MustRegister(h.metrics.Collectors()...)
	handle := h.Handle(ctx)
	plugin, err := New(ctx, args, handle,
		balance.Deps{Usage: h.source, Model: balance.SchedulerModel{}, Metrics: h.metrics, Clock: h.clock, Store: h.store, PodUsage: h,
			Events: h.Events})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// The informers the plugin registered (claims, volumes), started as the
	// descheduler starts its factory once every plugin is built.
	handle.SharedInformerFactory().Start(ctx.Done())
	handle.SharedInformerFactory().WaitForCacheSync(ctx.Done())
	h.plugin = plugin
	return h
}

// PodUsage makes the harness the metrics API: every pod uses h.podUsage
// when set, and is unmeasured otherwise.
func (h *harness) PodUsage(context.Context, *v1.Pod) (loadmodel.Amount, bool) {
	return h.podUsage, h.podUsage != (loadmodel.Amount{})
}

// cycle runs one Balance with usage loads, waits until the informer has
// seen every eviction and returns the pods evicted in this cycle.
func (h *harness) cycle(loads map[string]balance.NodeLoad, stale ...string) []string {
	h.t.Helper()
	before := len(h.Evicted)
	h.source.Set(h.clock.Now(), loads, stale...)
	h.plugin.Balance(h.ctx, h.nodes)
	h.waitInformer(func(get func(string) bool) bool {
		for _, n := range h.Evicted {
			if get(n) {
				return false
			}
		}
		return true
	})
	h.clock.Step(time.Minute)
	out := append([]string(nil), h.Evicted[before:]...)
	sort.Strings(out)
	return out
}

// add creates a pod, as the ReplicaSet controller and scheduler would place
// a replacement, one second from now.
func (h *harness) add(p *v1.Pod) {
	h.t.Helper()
	p.CreationTimestamp = metav1.NewTime(h.clock.Now().Add(time.Second))
	if _, err := h.Client.CoreV1().Pods(p.Namespace).Create(h.ctx, p, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	h.waitInformer(func(get func(string) bool) bool { return get(p.Name) })
}

func (h *harness) waitInformer(done func(get func(name string) bool) bool) {
	h.t.Helper()
	lister := h.plugin.Handle.SharedInformerFactory().Core().V1().Pods().Lister()
	get := func(name string) bool { _, err := lister.Pods("default").Get(name); return err == nil }
	if err := wait.PollUntilContextTimeout(h.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return done(get), nil
	}); err != nil {
		h.t.Fatalf("informer did not catch up: %v", err)
	}
}
