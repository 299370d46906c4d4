package balance

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"
)

// GrowthSource tells how a pod's memory grows: a podusage.Trend fed by the
// pod usage listing.
type GrowthSource interface {
	// Growth returns how pod's memory rose, and whether it keeps rising.
	Growth(pod types.NamespacedName) (podusage.Growth, bool)
}

// PodSamplePeriod is how often the descheduler lists every pod's usage
// between cycles, so that a pod whose memory keeps growing shows before a
// 5m descheduling interval would sample it often enough.
const PodSamplePeriod = 30 * time.Second

// ReasonMoved is the reason of the event a balance plugin records on a pod
// it moved: why, where it expected the replacement, and what it expected
// of both nodes' usage.
const ReasonMoved = "BallastMoved"

// Event reason and action of the warning about a growing pod.
const (
	ReasonMemoryGrowing = "MemoryGrowing"
	actionNotMoved      = "NotMoved"
	// growthWarningEvery is how often a pod that keeps growing is warned
	// about again.
	growthWarningEvery = time.Hour
)

// Growing reports whether pod's memory keeps growing at least as fast as
// the plugin's memoryGrowthPerMinute beyond what the pod requested, and how
// fast. Moving such a pod fixes nothing: it heats whatever node it lands on,
// and every move restarts it. A pod growing within its memory request (a
// cache warming up, a database filling its buffers) grows into room the
// scheduler reserved for it on its node: that is no leak, and the pod moves
// like any other.
func (p *Plugin) Growing(pod *v1.Pod) (podusage.Growth, bool) {
	if p.Deps.Growth == nil || p.GrowthPerMinute <= 0 {
		return podusage.Growth{}, false
	}
	g, ok := p.Deps.Growth.Growth(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	if !ok || g.BytesPerMinute < p.GrowthPerMinute {
		return g, false
	}
	if requested := loadmodel.PodRequests(pod).Memory; requested > 0 && g.Last <= float64(requested) {
		return g, false
	}
	return g, true
}

// WithoutGrowing returns pods without those that keep growing, each counted
// as skipped (growing).
func (p *Plugin) WithoutGrowing(logger klog.Logger, plugin string, pods []*v1.Pod) []*v1.Pod {
	out := pods[:0:0]
	for _, pod := range pods {
		if g, ok := p.Growing(pod); ok {
			p.Deps.Metrics.SkippedCandidates.WithLabelValues(plugin, SkipGrowing).Inc()
			logger.V(2).Info("Skipping eviction candidate: its memory keeps growing; it would heat any node it lands on",
				"pod", klog.KObj(pod), "skipReason", SkipGrowing, "MiBPerMinute", fmt.Sprintf("%.1f", g.MiBPerMinute()))
			continue
		}
		out = append(out, pod)
	}
	return out
}

// WarnGrowth tells the user about every pod on nodes whose memory keeps
// growing: the metric pod_memory_growth_mib_per_minute, and a Warning event
// MemoryGrowing on the pod once per growthWarningEvery. A leak is the
// user's to fix; Ballast only keeps from moving it around. Callers hold the
// Store's lock.
func (p *Plugin) WarnGrowth(logger klog.Logger, nodes []*v1.Node) {
	if p.Deps.Growth == nil || p.GrowthPerMinute <= 0 {
		return
	}
	now := p.Deps.Clock.Now()
	p.Deps.Metrics.MemoryGrowth.Reset()
	for _, n := range nodes {
		pods, err := p.Handle.GetPodsAssignedToNodeFunc()(n.Name, func(pod *v1.Pod) bool { return pod.DeletionTimestamp == nil })
		if err != nil {
			logger.Error(err, "Listing pods to look for growing memory", "node", klog.KObj(n))
			continue
		}
		for _, pod := range pods {
			g, ok := p.Growing(pod)
			if !ok {
				continue
			}
			rate := g.MiBPerMinute()
			p.Deps.Metrics.MemoryGrowth.WithLabelValues(pod.Namespace, pod.Name, n.Name).Set(rate)
			if !p.Deps.Store.warnGrowth(pod.UID, now) {
				continue
			}
			note := GrowthNote(g)
			logger.Info("Pod's memory keeps growing; Ballast does not move it", "pod", klog.KObj(pod), "node", klog.KObj(n),
				"MiBPerMinute", fmt.Sprintf("%.1f", rate), "over", g.Over)
			if p.Deps.Events != nil {
				p.Deps.Events.Eventf(pod, nil, v1.EventTypeWarning, ReasonMemoryGrowing, actionNotMoved, "%s", note)
			}
		}
	}
}

// GrowthNote is the text of a MemoryGrowing event, which ballast status
// shows as it is: "memory grows 34.2 MiB/min, 210 MiB to 710 MiB in 15m;
// not moved: it would fill any node it lands on".
func GrowthNote(g podusage.Growth) string {
	return fmt.Sprintf("memory grows %.1f MiB/min, %.0f MiB to %.0f MiB in %s; not moved: it would fill any node it lands on",
		g.MiBPerMinute(), g.First/(1<<20), g.Last/(1<<20), g.Over.Round(time.Minute))
}

// warnGrowth reports whether pod is due a warning at now, and if so
// records it. Callers hold the lock.
func (s *Store) warnGrowth(pod types.UID, now time.Time) bool {
	if s.warned == nil {
		s.warned = map[types.UID]time.Time{}
	}
	for uid, at := range s.warned {
		if now.Sub(at) >= growthWarningEvery {
			delete(s.warned, uid)
		}
	}
	if _, ok := s.warned[pod]; ok {
		return false
	}
	s.warned[pod] = now
	return true
}
