package loadawarebalance

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/features"
	frameworkfake "sigs.k8s.io/descheduler/pkg/framework/fake"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/load-watcher/pkg/loadscore"

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
	t       testing.TB
	ctx     context.Context
	client  *fake.Clientset
	plugin  *LoadAwareBalance
	source  *staticSource
	clock   *testingclock.FakeClock
	metrics *balance.Metrics
	nodes   []*v1.Node
	evicted []string
	// refuse makes the Eviction API answer 429 for these pods.
	refuse map[string]bool
	// podUsage is what the metrics API reports per pod name; a pod not in
	// it has no metrics.
	podUsage map[string]loadscore.Amount
	events   *events.FakeRecorder
}

func newHarness(t testing.TB, args *LoadAwareBalanceArgs, nodes []*v1.Node, pods ...*v1.Pod) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	objs := []runtime.Object{}
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	h := &harness{t: t, ctx: ctx, client: fake.NewClientset(objs...), source: &staticSource{},
		clock: testingclock.NewFakeClock(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)), metrics: balance.NewMetrics(), nodes: nodes, refuse: map[string]bool{},
		podUsage: map[string]loadscore.Amount{}}
	h.client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := action.(core.CreateAction).GetObject().(*policyv1.Eviction)
		if h.refuse[ev.Name] {
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		h.evicted = append(h.evicted, ev.Name)
		gvr := v1.SchemeGroupVersion.WithResource("pods")
		return true, nil, h.client.Tracker().Delete(gvr, ev.Namespace, ev.Name)
	})
	reg := metrics.NewKubeRegistry()
	reg.MustRegister(h.metrics.Collectors()...)
	handle := h.frameworkHandle(ctx)
	plugin, err := New(ctx, args, handle, balance.Deps{Usage: h.source, Model: balance.SchedulerModel{}, Metrics: h.metrics, Clock: h.clock, PodUsage: h})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.plugin = plugin
	return h
}

// PodUsage makes the harness the metrics API: it reports h.podUsage.
func (h *harness) PodUsage(_ context.Context, pod *v1.Pod) (loadscore.Amount, bool) {
	a, ok := h.podUsage[pod.Name]
	return a, ok
}

// frameworkHandle is the descheduler's test handle with an event recorder
// whose events the test can read.
func (h *harness) frameworkHandle(ctx context.Context) *frameworkfake.HandleImpl {
	h.t.Helper()
	factory := informers.NewSharedInformerFactory(h.client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	podsOn, err := podutil.BuildGetPodsAssignedToNodeFunc(podInformer)
	if err != nil {
		h.t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	h.waitWatching(ctx, factory)
	gates := featuregate.NewFeatureGate()
	if err := gates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		features.EvictionsInBackground: {Default: false, PreRelease: featuregate.Alpha},
	}); err != nil {
		h.t.Fatal(err)
	}
	h.events = events.NewFakeRecorder(100)
	evictor, err := evictions.NewPodEvictor(ctx, h.client, h.events, podInformer, gates, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	base := &frameworkfake.HandleImpl{ClientsetImpl: h.client, GetPodsAssignedToNodeFuncImpl: podsOn, SharedInformerFactoryImpl: factory}
	filter, err := defaultevictor.New(ctx, &defaultevictor.DefaultEvictorArgs{}, base)
	if err != nil {
		h.t.Fatal(err)
	}
	base.PodEvictorImpl = evictor
	base.EvictorFilterImpl = filter.(frameworktypes.EvictorPlugin)
	return base
}

// waitWatching returns once the pod informer's watch delivers events: the
// fake clientset drops events sent before a watch exists, and a lost
// deletion would leave an evicted pod in the cache.
func (h *harness) waitWatching(ctx context.Context, factory informers.SharedInformerFactory) {
	h.t.Helper()
	lister := factory.Core().V1().Pods().Lister()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		name := fmt.Sprintf("watch-probe-%d", time.Now().UnixNano())
		probe := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "watch-probe", Name: name}}
		if _, err := h.client.CoreV1().Pods("watch-probe").Create(ctx, probe, metav1.CreateOptions{}); err != nil {
			return false, err
		}
		seen := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			_, err := lister.Pods("watch-probe").Get(name)
			return err == nil, nil
		}) == nil
		return seen, h.client.CoreV1().Pods("watch-probe").Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err != nil {
		h.t.Fatalf("pod informer never watched: %v", err)
	}
}

// recordedEvents drains the events recorded so far.
func (h *harness) recordedEvents() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// cycle runs one Balance with usage loads, then waits until the informer
// has seen every eviction.
func (h *harness) cycle(loads map[string]balance.NodeLoad, stale ...string) {
	h.t.Helper()
	h.source.Set(h.clock.Now(), loads, stale...)
	h.plugin.Balance(h.ctx, h.nodes)
	h.waitGone(h.evicted...)
	h.clock.Step(time.Minute)
}

func (h *harness) waitGone(names ...string) {
	h.t.Helper()
	lister := h.plugin.handle.SharedInformerFactory().Core().V1().Pods().Lister()
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
	if _, err := h.client.CoreV1().Pods(p.Namespace).Create(h.ctx, p, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	lister := h.plugin.handle.SharedInformerFactory().Core().V1().Pods().Lister()
	if err := wait.PollUntilContextTimeout(h.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := lister.Pods(p.Namespace).Get(p.Name)
		return err == nil, nil
	}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) evictedSorted() []string {
	out := append([]string(nil), h.evicted...)
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

func (h *harness) counter(c *metrics.CounterVec, labels ...string) float64 {
	h.t.Helper()
	v, err := testutil.GetCounterMetricValue(c.WithLabelValues(labels...))
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

func ptrTo[T any](v T) *T { return &v }
