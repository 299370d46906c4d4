package podusage

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// recorded reports usage per pod name and remembers which pods were asked for.
type recorded struct {
	usage map[string]loadmodel.Amount
	asked []string
}

func (r *recorded) PodUsage(_ context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	r.asked = append(r.asked, pod.Name)
	a, ok := r.usage[pod.Name]
	return a, ok
}

// replica returns a pod of controller owner, running since started minutes
// before t0 (not running when started < 0).
func replica(name string, owner types.UID, started int) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", UID: types.UID(name)}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: string(owner), UID: owner, Controller: ptr.To(true)}}
	}
	if started >= 0 {
		p.Spec.NodeName = "n1"
		p.Status.Phase = v1.PodRunning
		p.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Duration(started) * time.Minute)}
	}
	return p
}

func lister(t *testing.T, pods ...*v1.Pod) corelisters.PodLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewPodLister(idx)
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestSiblingsEstimateIsTheMedianOfRunningSiblings(t *testing.T) {
	terminating := replica("web-gone", "rs-web", 30)
	terminating.DeletionTimestamp = &metav1.Time{Time: t0}
	other := replica("db-0", "rs-db", 30)
	other.Namespace = "apps"
	pods := []*v1.Pod{
		replica("web-a", "rs-web", 10), replica("web-b", "rs-web", 20), replica("web-c", "rs-web", 5),
		replica("web-pending", "rs-web", -1), terminating, other,
	}
	src := &recorded{usage: map[string]loadmodel.Amount{
		"web-a": {MilliCPU: 900, Memory: 700 << 20}, "web-b": {MilliCPU: 800, Memory: 600 << 20},
		"web-c": {MilliCPU: 2000, Memory: 650 << 20}, "web-gone": {MilliCPU: 1, Memory: 1}, "db-0": {MilliCPU: 1, Memory: 1},
	}}
	s := NewSiblings(src, lister(t, pods...), SiblingsOptions{Now: (&clock{t0}).now})

	got, ok := s.Estimate(context.Background(), replica("web-new", "rs-web", -1))
	if !ok {
		t.Fatal("Estimate() found no measurement, want the running siblings' median")
	}
	if want := (loadmodel.Amount{MilliCPU: 900, Memory: 650 << 20}); got != want {
		t.Errorf("Estimate() = %+v, want the per-resource median %+v", got, want)
	}
	if want := []string{"web-b", "web-a", "web-c"}; fmt.Sprint(src.asked) != fmt.Sprint(want) {
		t.Errorf("asked for %v, want the running siblings longest-running first %v", src.asked, want)
	}
}

func TestSiblingsWithoutControllerOrRunningSiblingsHaveNoEstimate(t *testing.T) {
	src := &recorded{usage: map[string]loadmodel.Amount{"solo": {MilliCPU: 100}}}
	s := NewSiblings(src, lister(t, replica("solo", "", 10), replica("batch-0", "job-1", -1)), SiblingsOptions{})
	for _, pod := range []*v1.Pod{replica("bare", "", -1), replica("batch-1", "job-1", -1)} {
		if a, ok := s.Estimate(context.Background(), pod); ok {
			t.Errorf("Estimate(%s) = %+v, want none", pod.Name, a)
		}
	}
	if len(src.asked) != 0 {
		t.Errorf("asked the metrics API for %v, want nothing while no sibling runs", src.asked)
	}
	var nilSiblings *Siblings
	if _, ok := nilSiblings.Estimate(context.Background(), replica("x", "rs", -1)); ok {
		t.Error("a nil Siblings estimated a pod")
	}
}

func TestSiblingsMeasureAFewAndRememberThemForTheTTL(t *testing.T) {
	var pods []*v1.Pod
	src := &recorded{usage: map[string]loadmodel.Amount{}}
	for i := range 8 {
		name := fmt.Sprintf("w-%d", i)
		pods = append(pods, replica(name, "rs-w", 60-i))
		src.usage[name] = loadmodel.Amount{MilliCPU: int64(100 * (i + 1))}
	}
	c := &clock{t0}
	s := NewSiblings(src, lister(t, pods...), SiblingsOptions{Sample: 3, TTL: time.Minute, Now: c.now})
	ctx := context.Background()

	got, _ := s.Estimate(ctx, replica("w-new", "rs-w", -1))
	if want := int64(200); got.MilliCPU != want {
		t.Errorf("Estimate() CPU = %d, want %d (median of the three longest-running)", got.MilliCPU, want)
	}
	if len(src.asked) != 3 {
		t.Fatalf("asked for %v, want 3 siblings (Sample)", src.asked)
	}
	c.t = t0.Add(59 * time.Second)
	if _, ok := s.Estimate(ctx, replica("w-new2", "rs-w", -1)); !ok || len(src.asked) != 3 {
		t.Errorf("within the TTL: ok=%v, asked %d times, want the remembered estimate and no new request", ok, len(src.asked))
	}
	c.t = t0.Add(time.Minute)
	src.usage["w-0"] = loadmodel.Amount{MilliCPU: 5000}
	src.usage["w-1"] = loadmodel.Amount{MilliCPU: 5000}
	if got, _ := s.Estimate(ctx, replica("w-new3", "rs-w", -1)); got.MilliCPU != 5000 || len(src.asked) != 6 {
		t.Errorf("after the TTL: CPU %d after %d requests, want a new measurement (5000 after 6)", got.MilliCPU, len(src.asked))
	}
}

func TestSiblingsWithoutMetricsAreNotAskedAgainWithinTheTTL(t *testing.T) {
	src := &recorded{usage: map[string]loadmodel.Amount{}}
	c := &clock{t0}
	s := NewSiblings(src, lister(t, replica("a", "rs", 10), replica("b", "rs", 10)), SiblingsOptions{TTL: time.Minute, Now: c.now})
	for range 3 {
		if _, ok := s.Estimate(context.Background(), replica("new", "rs", -1)); ok {
			t.Fatal("Estimate() found a measurement, want none: no sibling has metrics")
		}
	}
	if len(src.asked) != 2 {
		t.Errorf("asked %d times, want 2: one round, then the miss is remembered", len(src.asked))
	}
}
