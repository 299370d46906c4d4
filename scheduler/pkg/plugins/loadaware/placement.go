package loadaware

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Placement events: what a pod was placed by, on the pod, where `kubectl
// describe pod` and `ballast explain pod` show it.
const (
	// ReasonPlaced is the reason of the event LoadAware records when a pod
	// it scored is placed.
	ReasonPlaced = "LoadAwarePlaced"
	// maxEventNote is what the API server keeps of an event's note.
	maxEventNote = 1024
	// rejectionsNamed is how many rejected nodes an event names.
	rejectionsNamed = 3
	// placementEventsPerSecond and placementEventBurst bound the placement
	// events a scheduler records: one costs about as much CPU as the
	// placement itself, and a rollout of hundreds of pods while a node is
	// hot would otherwise double the scheduler's work. A homelab's
	// placements come far slower than that.
	placementEventsPerSecond = 1
	placementEventBurst      = 10
)

// rejections are the nodes Filter rejected in one cycle: a few of them by
// name with why, and how many in all. Filter runs on many nodes at once;
// past the first few, noting one is an atomic add.
type rejections struct {
	count atomic.Int32
	mu    sync.Mutex
	named []string
}

func (r *rejections) note(node string, reasons []string) {
	if r.count.Add(1) > rejectionsNamed {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.named = append(r.named, node+" ("+strings.Join(reasons, ", ")+")")
}

// any reports whether Filter rejected a node.
func (r *rejections) any() bool { return r.count.Load() > 0 }

func (r *rejections) String() string {
	count := int(r.count.Load())
	if count == 0 {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := "rejected for load: " + strings.Join(r.named, "; ")
	if more := count - len(r.named); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// recordPlacement records the event of pod placed on node in the cycle of
// cs: the node's figures as Filter and Score saw them, and the nodes
// rejected for load. Reserve records it when load shaped the placement (a
// node was rejected for its load), as often as the placement events' rate
// allows: an event costs the scheduler about as much CPU as the placement
// itself (docs/performance.md), too much for every pod of a quiet cluster,
// where `ballast explain pod` says the same on asking.
func (pl *LoadAware) recordPlacement(ctx context.Context, cs fwk.CycleState, s *cycle, pod *v1.Pod, node string) {
	if !pl.placementRate.TryAccept() {
		return
	}
	ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(node)
	if err != nil {
		return
	}
	note := placementNote(node, pl.Report(ctx, cs, pod, ni, true), s.overloaded.String())
	pl.handle.EventRecorder().Eventf(pod, nil, v1.EventTypeNormal, ReasonPlaced, "Scheduling", "%s", note)
}

// placementNote says what a pod was placed on node by.
func placementNote(node string, r NodeReport, rejected string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Placed on %s", node)
	switch {
	case r.Unavailable != "":
		fmt.Fprintf(&b, " by requests alone: no usage to go by (%s)", r.Unavailable)
	default:
		b.WriteString(" by load:")
		for i, f := range r.Resources {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %.1f%%+%.1f%%+%.1f%%=%.1f%%", f.Resource, f.Current, f.Pending, f.Pod, f.Predicted)
			if f.Threshold > 0 {
				fmt.Fprintf(&b, " (threshold %g%%)", f.Threshold)
			}
		}
		b.WriteString(" (measured+pending+pod)")
		if r.Exempt {
			b.WriteString("; the thresholds do not apply to this pod")
		}
	}
	if sc := r.Score; sc != nil {
		fmt.Fprintf(&b, "; score %d: usage %.0f×%g", sc.Total, sc.Usage, sc.UsageWeight)
		if sc.RiskWeight > 0 {
			fmt.Fprintf(&b, ", risk %.0f×%g", sc.Risk, sc.RiskWeight)
		}
		if sc.PodsWeight > 0 {
			fmt.Fprintf(&b, ", pods %.0f×%g (%d of %d slots free)", sc.Pods, sc.PodsWeight, sc.FreePods, sc.MostFreePods)
		}
	}
	if rejected != "" {
		b.WriteString("; " + rejected)
	}
	s := b.String()
	if len(s) > maxEventNote {
		s = s[:maxEventNote-3] + "..."
	}
	return s
}
