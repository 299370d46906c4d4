package nodeload

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

func stats(avg float64) map[usage.Window]map[usage.Resource]usage.Stats {
	s := usage.Stats{Avg: avg, P95: avg, Latest: avg, Samples: 3}
	return map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: {usage.CPU: s, usage.Memory: s}}
}

func TestLookup(t *testing.T) {
	snap := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"ok":    {Node: "ok", Windows: stats(40)},
		"stale": {Node: "stale", Stale: true, Windows: stats(40)},
		"nan":   {Node: "nan", Windows: stats(math.NaN())},
		// The client marks refused data stale and says why.
		"refused": {Node: "refused", Stale: true, Invalid: "nodes[refused].windows[5m][cpu].avg: Invalid value: -3: negative", Windows: stats(40)},
	}}
	tests := []struct {
		name   string
		snap   *usage.Snapshot
		node   string
		window usage.Window
		want   Cause
	}{
		{name: "fresh", snap: snap, node: "ok", window: usage.Window5m, want: CauseNone},
		{name: "no snapshot yet", snap: nil, node: "ok", window: usage.Window5m, want: CauseMissing},
		{name: "node absent", snap: snap, node: "new", window: usage.Window5m, want: CauseMissing},
		{name: "window not kept", snap: snap, node: "ok", window: usage.Window15m, want: CauseMissing},
		{name: "stale", snap: snap, node: "stale", window: usage.Window5m, want: CauseStale},
		{name: "NaN", snap: snap, node: "nan", window: usage.Window5m, want: CauseInvalid},
		{name: "refused by the client", snap: snap, node: "refused", window: usage.Window5m, want: CauseInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := Lookup(tt.snap, tt.node, tt.window, usage.CPU, usage.Memory); got != tt.want {
				t.Errorf("Lookup() cause = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReportCountsAndEmitsOneEventPerPodAndCause(t *testing.T) {
	reg := prometheus.NewRegistry()
	clock := &fakeClock{t: t0}
	tr := NewTracker(nil, Options{Registerer: reg, Now: clock.now})
	rec := events.NewFakeRecorder(10)
	h := fakeHandle{rec: rec}
	pod := boundPod("p", "")

	var u Unavailable
	u.Add("n1", CauseMissing)
	u.Add("n2", CauseMissing)
	u.Add("n3", CauseStale)
	tr.Report(context.Background(), h, "LoadAware", pod, u)
	tr.Report(context.Background(), h, "LoadAware", pod, u) // a retry of the same pod

	if got := testutil.ToFloat64(tr.Metrics().Unavailable.WithLabelValues("LoadAware", string(CauseMissing))); got != 4 {
		t.Errorf("missing counter = %v, want 4 (2 nodes × 2 attempts)", got)
	}
	if got := testutil.ToFloat64(tr.Metrics().Unavailable.WithLabelValues("LoadAware", string(CauseStale))); got != 2 {
		t.Errorf("stale counter = %v, want 2", got)
	}
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	if len(got) != 2 {
		t.Fatalf("events = %q, want one per cause", got)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"Warning UsageMissing LoadAware: no usage from load-watcher for 2 node(s) (e.g. n1)", "Warning UsageStale"} {
		if !strings.Contains(joined, want) {
			t.Errorf("events %q lack %q", got, want)
		}
	}

	// After an hour the pod, if still pending, gets a reminder.
	clock.step(time.Hour)
	rec2 := events.NewFakeRecorder(10)
	tr.Report(context.Background(), fakeHandle{rec: rec2}, "LoadAware", pod, u)
	if len(rec2.Events) != 2 {
		t.Errorf("after an hour: %d events, want 2 reminders", len(rec2.Events))
	}
}

func TestMetricsReuseRegisteredCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := NewMetrics(reg)
	b := NewMetrics(reg) // a second scheduler in the same process
	b.Filtered.WithLabelValues("LoadAware", "cpu").Inc()
	if got := testutil.ToFloat64(a.Filtered.WithLabelValues("LoadAware", "cpu")); got != 1 {
		t.Errorf("second Metrics did not reuse the registered counter: first sees %v, want 1", got)
	}
}

// podUsageSource is a usage source that also tells what pods use.
type podUsageSource struct {
	usage map[string]loadmodel.Amount
}

func (s podUsageSource) Snapshot() *usage.Snapshot { return nil }
func (s podUsageSource) PodUsage(_ context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	a, ok := s.usage[pod.Name]
	return a, ok
}

// informerHandle is a framework handle with only an informer factory.
type informerHandle struct {
	fwk.Handle
	factory informers.SharedInformerFactory
}

func (h informerHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.factory }

func TestTrackerEstimatesPodsByTheirRunningSiblings(t *testing.T) {
	owned := func(name string, running bool) *v1.Pod {
		p := boundPod(name, "")
		p.Namespace = "apps"
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "w", UID: "rs-w", Controller: ptr.To(true)}}
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m"), v1.ResourceMemory: resource.MustParse("64Mi")}
		if running {
			p.Spec.NodeName, p.Status.Phase, p.Status.StartTime = "n1", v1.PodRunning, at(t0, -time.Hour)
		}
		return p
	}
	client := fake.NewClientset(owned("w-0", true))
	factory := informers.NewSharedInformerFactory(client, 0)
	reg := prometheus.NewRegistry()
	measured := loadmodel.Amount{MilliCPU: 900, Memory: 700 << 20}
	tr := NewTracker(podUsageSource{usage: map[string]loadmodel.Amount{"w-0": measured}}, Options{Registerer: reg, Now: (&fakeClock{t: t0}).now})
	if err := tr.Attach("test", informerHandle{factory: factory}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	if got := tr.EstimatePod(ctx, "P", owned("w-1", false), flat); got != measured {
		t.Errorf("EstimatePod() of a replica with a running sibling = %+v, want its sibling's usage %+v", got, measured)
	}
	bare := boundPod("bare", "")
	if got := tr.EstimatePod(ctx, "P", bare, flat); got.MilliCPU != 1000 {
		t.Errorf("EstimatePod() of a bare pod = %+v, want the request estimate (1000m)", got)
	}
	for source, want := range map[string]float64{EstimateSiblings: 1, EstimateRequests: 1} {
		if got := testutil.ToFloat64(tr.Metrics().Estimates.WithLabelValues("P", source)); got != want {
			t.Errorf("pod_estimates_total{source=%q} = %v, want %v", source, got, want)
		}
	}
	tr.Reserve(ctx, owned("w-1", false), "n2")
	if got := tr.Pending().Sum("n2", t0.Add(-time.Minute), 5*time.Minute, flat); got != measured {
		t.Errorf("reserved replica pending %+v, want its siblings' usage %+v", got, measured)
	}
}

func TestAttachWithoutTrackerNamesThePlugin(t *testing.T) {
	var tr *Tracker
	if err := tr.Attach("LoadAware", nil); err == nil || !strings.Contains(err.Error(), "LoadAware needs a usage tracker") {
		t.Errorf("Attach on a nil tracker: err = %v, want one naming the plugin", err)
	}
}

// TestMetricsStartAtZero: every cause of unavailable usage and every source
// of an estimate has its series as soon as a plugin attaches, so dashboards
// show 0 rather than no data.
func TestMetricsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	tr := NewTracker(snapshotOnly{}, Options{Registerer: reg})
	if err := tr.Attach("P", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		vec  *prometheus.CounterVec
		want int
	}{
		{tr.Metrics().Unavailable, 3},
		{tr.Metrics().Estimates, 2},
		{tr.Metrics().Overcommitted, len(usage.Resources)},
	} {
		if n := testutil.CollectAndCount(tc.vec); n != tc.want {
			t.Errorf("%d series before any event, want %d", n, tc.want)
		}
	}
	if v := testutil.ToFloat64(tr.Metrics().Unavailable.WithLabelValues("P", string(CauseStale))); v != 0 {
		t.Errorf("stale usage counted %v, want 0", v)
	}
}
