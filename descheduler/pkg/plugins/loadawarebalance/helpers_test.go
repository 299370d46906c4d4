package loadawarebalance

import (
	"context"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

const mib = balancetest.MiB

// The builders and the usage source every balance plugin's tests share.
var (
	node  = balancetest.Node
	pod   = balancetest.Pod
	loads = balancetest.Loads
)

type staticSource = balancetest.StaticSource

// harness runs the plugin over a fake clientset whose evictions delete the
// pod, as the Eviction API does.
type harness struct {
	t   testing.TB
	ctx context.Context
	*balancetest.Cluster
	plugin  *LoadAwareBalance
	source  *staticSource
	clock   *testingclock.FakeClock
	metrics *balance.Metrics
	nodes   []*v1.Node
	// podUsage is what the metrics API reports per pod name; a pod not in
	// it has no metrics.
	podUsage map[string]loadmodel.Amount
	// growth is how each pod's memory grows, by pod name; a pod not in it
	// does not grow.
	growth map[string]podusage.Growth
}

func newHarness(t testing.TB, args *LoadAwareBalanceArgs, nodes []*v1.Node, pods ...*v1.Pod) *harness {
	t.Helper()
	return newHarnessWith(t, args, nodes, nil, pods...)
}

// newHarnessWith is newHarness with objects of other kinds in the cluster
// (claims, volumes).
func newHarnessWith(t testing.TB, args *LoadAwareBalanceArgs, nodes []*v1.Node, objs []runtime.Object, pods ...*v1.Pod) *harness {
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
		clock: testingclock.NewFakeClock(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)), metrics: balance.NewMetrics(), nodes: nodes,
		podUsage: map[string]loadmodel.Amount{}, growth: map[string]podusage.Growth{}}
	reg := metrics.NewKubeRegistry()
	reg.MustRegister(h.metrics.Collectors()...)
	handle := h.Handle(ctx)
	plugin, err := New(ctx, args, handle, balance.Deps{Usage: h.source, Model: balance.SchedulerModel{}, Metrics: h.metrics, Clock: h.clock, PodUsage: h,
		Growth: h, Events: h.Events})
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

// PodUsage makes the harness the metrics API: it reports h.podUsage.
func (h *harness) PodUsage(_ context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	a, ok := h.podUsage[pod.Name]
	return a, ok
}

// Growth makes the harness the pods' memory trend: it reports h.growth.
func (h *harness) Growth(pod types.NamespacedName) (podusage.Growth, bool) {
	g, ok := h.growth[pod.Name]
	return g, ok
}

// cycle runs one Balance with usage loads, then waits until the informer
// has seen every eviction.
func (h *harness) cycle(loads map[string]balance.NodeLoad, stale ...string) {
	h.t.Helper()
	h.source.Set(h.clock.Now(), loads, stale...)
	h.plugin.Balance(h.ctx, h.nodes)
	h.waitGone(h.Evicted...)
	h.clock.Step(time.Minute)
}

func (h *harness) waitGone(names ...string) {
	h.t.Helper()
	lister := h.plugin.Handle.SharedInformerFactory().Core().V1().Pods().Lister()
	err := wait.PollUntilContextTimeout(h.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, n := range names {
			if _, err := lister.Pods("default").Get(n); err == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		h.t.Fatalf("evicted pods %v still in the informer: %v", names, err)
	}
}

func (h *harness) Add(p *v1.Pod) {
	h.t.Helper()
	if _, err := h.Client.CoreV1().Pods(p.Namespace).Create(h.ctx, p, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	lister := h.plugin.Handle.SharedInformerFactory().Core().V1().Pods().Lister()
	if err := wait.PollUntilContextTimeout(h.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := lister.Pods(p.Namespace).Get(p.Name)
		return err == nil, nil
	}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) evictedSorted() []string {
	out := append([]string(nil), h.Evicted...)
	sort.Strings(out)
	return out
}

func (h *harness) skipped(reason string) float64 {
	h.t.Helper()
	v, err := testutil.GetCounterMetricValue(h.metrics.SkippedCandidates.WithLabelValues(PluginName, reason))
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

func ptrTo[T any](v T) *T { return &v }
