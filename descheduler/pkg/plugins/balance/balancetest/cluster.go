package balancetest

import (
	"context"
	"fmt"
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
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/features"
	frameworkfake "sigs.k8s.io/descheduler/pkg/framework/fake"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
)

// Cluster is a fake clientset whose evictions delete the pod, as the
// Eviction API does, and the descheduler handle a balance plugin runs on.
type Cluster struct {
	t      testing.TB
	Client *fake.Clientset
	// Evicted are the pods evicted so far, in order.
	Evicted []string
	// Refuse makes the Eviction API answer 429 for these pods.
	Refuse map[string]bool
	// Events records the evictor's events.
	Events *events.FakeRecorder
}

// NewClusterOf returns a cluster holding nodes and pods.
func NewClusterOf(t testing.TB, nodes []*v1.Node, pods []*v1.Pod) *Cluster {
	objs := make([]runtime.Object, 0, len(nodes)+len(pods))
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	return NewCluster(t, objs...)
}

// NewCluster returns a cluster holding objs.
func NewCluster(t testing.TB, objs ...runtime.Object) *Cluster {
	c := &Cluster{t: t, Client: fake.NewClientset(objs...), Refuse: map[string]bool{}, Events: events.NewFakeRecorder(100)}
	c.Client.PrependReactor("create", "pods", func(action core.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := action.(core.CreateAction).GetObject().(*policyv1.Eviction)
		if c.Refuse[ev.Name] {
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		c.Evicted = append(c.Evicted, ev.Name)
		return true, nil, c.Client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	})
	return c
}

// Handle is the descheduler's test handle over the cluster, with a
// started pod informer, the upstream DefaultEvictor and an evictor whose
// events land in c.Events.
func (c *Cluster) Handle(ctx context.Context) *frameworkfake.HandleImpl {
	c.t.Helper()
	factory := informers.NewSharedInformerFactory(c.Client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	podsOn, err := podutil.BuildGetPodsAssignedToNodeFunc(podInformer)
	if err != nil {
		c.t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	c.waitWatching(ctx, factory)
	gates := featuregate.NewFeatureGate()
	if err := gates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		features.EvictionsInBackground: {Default: false, PreRelease: featuregate.Alpha},
	}); err != nil {
		c.t.Fatal(err)
	}
	evictor, err := evictions.NewPodEvictor(ctx, c.Client, c.Events, podInformer, gates, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	base := &frameworkfake.HandleImpl{ClientsetImpl: c.Client, GetPodsAssignedToNodeFuncImpl: podsOn, SharedInformerFactoryImpl: factory}
	filter, err := defaultevictor.New(ctx, &defaultevictor.DefaultEvictorArgs{}, base)
	if err != nil {
		c.t.Fatal(err)
	}
	base.PodEvictorImpl = evictor
	base.EvictorFilterImpl = filter.(frameworktypes.EvictorPlugin)
	return base
}

// waitWatching returns once the pod informer's watch delivers events: the
// fake clientset drops events sent before a watch exists, and a lost
// deletion would leave an evicted pod in the cache.
func (c *Cluster) waitWatching(ctx context.Context, factory informers.SharedInformerFactory) {
	c.t.Helper()
	lister := factory.Core().V1().Pods().Lister()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		name := fmt.Sprintf("watch-probe-%d", time.Now().UnixNano())
		probe := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "watch-probe", Name: name}}
		if _, err := c.Client.CoreV1().Pods("watch-probe").Create(ctx, probe, metav1.CreateOptions{}); err != nil {
			return false, err
		}
		seen := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			_, err := lister.Pods("watch-probe").Get(name)
			return err == nil, nil
		}) == nil
		return seen, c.Client.CoreV1().Pods("watch-probe").Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err != nil {
		c.t.Fatalf("pod informer never watched: %v", err)
	}
}

// RecordedEvents drains the events recorded so far.
func (c *Cluster) RecordedEvents() []string {
	var out []string
	for {
		select {
		case e := <-c.Events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// Counter returns the value of c's counter with labels.
func (c *Cluster) Counter(vec *metrics.CounterVec, labels ...string) float64 {
	c.t.Helper()
	v, err := testutil.GetCounterMetricValue(vec.WithLabelValues(labels...))
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}
