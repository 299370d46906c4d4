package health

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// memoryGrowingReason is the reason of the descheduler's warning about a
// pod whose memory keeps growing (balance.ReasonMemoryGrowing; the
// installer does not import the descheduler).
const memoryGrowingReason = "MemoryGrowing"

// growingWithin is how recent a warning must be to be shown: the
// descheduler repeats it every hour while the pod grows.
const growingWithin = 2 * time.Hour

// Growing is a pod whose memory keeps growing, as the descheduler last
// warned about it.
type Growing struct {
	Namespace, Pod string
	// Note is the warning's text: the rate, from what to what, over how long.
	Note string
	// Seen is when the descheduler last warned.
	Seen time.Time
}

// growingPods reads the descheduler's MemoryGrowing warnings of the last
// growingWithin, the newest per pod, by namespace and pod name.
func growingPods(ctx context.Context, client kubernetes.Interface, now time.Time) ([]Growing, error) {
	events, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", memoryGrowingReason).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list %s events: %w", memoryGrowingReason, err)
	}
	newest := map[[2]string]Growing{}
	for _, ev := range events.Items {
		seen := eventTime(ev)
		if ev.Reason != memoryGrowingReason || ev.InvolvedObject.Kind != "Pod" || now.Sub(seen) > growingWithin {
			continue
		}
		key := [2]string{ev.InvolvedObject.Namespace, ev.InvolvedObject.Name}
		if g, ok := newest[key]; !ok || seen.After(g.Seen) {
			newest[key] = Growing{Namespace: key[0], Pod: key[1], Note: ev.Message, Seen: seen}
		}
	}
	out := make([]Growing, 0, len(newest))
	for _, g := range newest {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Growing) int {
		return strings.Compare(a.Namespace+"/"+a.Pod, b.Namespace+"/"+b.Pod)
	})
	return out, nil
}

// eventTime is when ev last happened, whichever API wrote it.
func eventTime(ev corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}

// writeGrowing prints the pods whose memory keeps growing.
func writeGrowing(w io.Writer, pods []Growing, now time.Time) error {
	fmt.Fprintln(w, "pods whose memory keeps growing (a leak? Ballast does not move them: they would fill any node):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  POD\tGROWTH\tWARNED")
	for _, g := range pods {
		fmt.Fprintf(tw, "  %s/%s\t%s\t%s ago\n", g.Namespace, g.Pod, g.Note, strings.TrimSuffix(now.Sub(g.Seen).Round(time.Minute).String(), "0s"))
	}
	return tw.Flush()
}
