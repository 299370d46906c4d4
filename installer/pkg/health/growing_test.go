package health

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// ballast status lists the pods the descheduler recently warned about, the
// newest warning per pod, and none older than two hours.
func TestStatusShowsGrowingPods(t *testing.T) {
	now := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	warning := func(name, ns, pod, note string, at time.Time) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod},
			Reason:         memoryGrowingReason, Message: note, Type: corev1.EventTypeWarning,
			EventTime: metav1.NewMicroTime(at), ReportingController: "ballast-descheduler",
		}
	}
	objs := []runtime.Object{
		warning("a", "apps", "cache-0", "memory grows 30.0 MiB/min, 200 MiB to 650 MiB in 15m", now.Add(-70*time.Minute)),
		warning("b", "apps", "cache-0", "memory grows 34.2 MiB/min, 210 MiB to 710 MiB in 15m", now.Add(-10*time.Minute)),
		warning("c", "media", "jellyfin-7c9", "memory grows 2.1 MiB/min, 900 MiB to 931 MiB in 15m", now.Add(-30*time.Minute)),
		// Too old: the pod stopped growing or is gone.
		warning("d", "apps", "old-0", "memory grows 5.0 MiB/min", now.Add(-3*time.Hour)),
		// Another reason on the same pod.
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "apps"}, Reason: "Evicted",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "apps", Name: "web-1"}, EventTime: metav1.NewMicroTime(now)},
	}
	r := Collect(context.Background(), Options{Client: fake.NewClientset(objs...), Namespace: "ballast-system", ReleaseName: "ballast",
		Now: func() time.Time { return now }})
	if r.GrowingErr != nil {
		t.Fatal(r.GrowingErr)
	}
	want := []Growing{
		{Namespace: "apps", Pod: "cache-0", Note: "memory grows 34.2 MiB/min, 210 MiB to 710 MiB in 15m", Seen: now.Add(-10 * time.Minute)},
		{Namespace: "media", Pod: "jellyfin-7c9", Note: "memory grows 2.1 MiB/min, 900 MiB to 931 MiB in 15m", Seen: now.Add(-30 * time.Minute)},
	}
	if diff := cmp.Diff(want, r.Growing); diff != "" {
		t.Errorf("growing pods (-want,+got):\n%s", diff)
	}
	var out bytes.Buffer
	if err := writeGrowing(&out, r.Growing, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("status output:\n%s\nwant a heading, a header and two pods", out.String())
	}
	for i, want := range [][]string{
		{"apps/cache-0", "memory grows 34.2 MiB/min, 210 MiB to 710 MiB in 15m", "10m ago"},
		{"media/jellyfin-7c9", "memory grows 2.1 MiB/min", "30m ago"},
	} {
		for _, part := range want {
			if !strings.Contains(lines[i+2], part) {
				t.Errorf("line %q lacks %q", lines[i+2], part)
			}
		}
	}
}
