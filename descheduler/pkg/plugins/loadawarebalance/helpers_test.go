package loadawarebalance

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
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
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

const mib = 1 << 20

// Test nodes have 4 CPUs and 1000 MiB, so 10 MiB of memory is 1 %.
func node(name string, apply ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("4"),
				v1.ResourceMemory: *resource.NewQuantity(1000*mib, resource.BinarySI),
				v1.ResourcePods:   resource.MustParse("110"),
			},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	n.Status.Capacity = n.Status.Allocatable
	for _, a := range apply {
		a(n)
	}
	return n
}

// pod is a ReplicaSet pod requesting 100m CPU (2.5 %) and memMiB MiB.
// Ballast's scheduler placed it.
func pod(name, nodeName, rs string, memMiB int64, apply ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: k8stypes.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: k8stypes.UID("rs-" + rs), Controller: ptrTo(true),
			}},
		},
		Spec: v1.PodSpec{
			NodeName:      nodeName,
			SchedulerName: "ballast-scheduler",
			Containers: []v1.Container{{Name: "c", Image: "img", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("100m"),
				v1.ResourceMemory: *resource.NewQuantity(memMiB*mib, resource.BinarySI),
			}}}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
	for _, a := range apply {
		a(p)
	}
	return p
}

// staticSource serves a snapshot set by the test.
type staticSource struct {
	mu   sync.Mutex
	snap *usage.Snapshot
	// peaks are window maxima above the average, per node; a node not in
	// it peaks at its average.
	peaks map[string]NodeLoad
}

func (s *staticSource) Snapshot() *usage.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// set publishes usage per node as the 5m window average; nodes listed in
// stale are marked stale.
func (s *staticSource) set(at time.Time, loads map[string]NodeLoad, stale ...string) {
	snap := &usage.Snapshot{Time: at, Source: "test", Nodes: map[string]usage.NodeUsage{}}
	for name, l := range loads {
		stats := map[usage.Resource]usage.Stats{}
		for r, v := range l {
			peak := v
			if p, ok := s.peaks[name][r]; ok {
				peak = p
			}
			stats[r] = usage.Stats{Avg: v, Latest: v, Max: peak, P95: peak, Samples: 20}
		}
		snap.Nodes[name] = usage.NodeUsage{Node: name, SampleTime: at, Windows: map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: stats}}
	}
	for _, name := range stale {
		n := snap.Nodes[name]
		n.Stale = true
		snap.Nodes[name] = n
	}
	s.mu.Lock()
	s.snap = snap
	s.mu.Unlock()
}

// harness runs the plugin over a fake clientset whose evictions delete the
// pod, as the Eviction API does.
type harness struct {
	t       testing.TB
	ctx     context.Context
	client  *fake.Clientset
	plugin  *LoadAwareBalance
	source  *staticSource
	clock   *testingclock.FakeClock
	metrics *Metrics
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
		clock: testingclock.NewFakeClock(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)), metrics: NewMetrics(), nodes: nodes, refuse: map[string]bool{},
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
	plugin, err := New(ctx, args, handle, Deps{Usage: h.source, Model: SchedulerModel{}, Metrics: h.metrics, Clock: h.clock, PodUsage: h})
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
func (h *harness) cycle(loads map[string]NodeLoad, stale ...string) {
	h.t.Helper()
	h.source.set(h.clock.Now(), loads, stale...)
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

func loads(kv ...any) map[string]NodeLoad {
	out := map[string]NodeLoad{}
	for i := 0; i < len(kv); i += 3 {
		out[kv[i].(string)] = NodeLoad{usage.CPU: float64(kv[i+1].(int)), usage.Memory: float64(kv[i+2].(int))}
	}
	return out
}
