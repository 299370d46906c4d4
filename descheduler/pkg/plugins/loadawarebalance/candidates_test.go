package loadawarebalance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestSortCandidates(t *testing.T) {
	bestEffort := func(p *v1.Pod) { p.Spec.Containers[0].Resources = v1.ResourceRequirements{} }
	guaranteed := func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests
	}
	prio := func(v int32) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.Priority = &v } }
	pods := []*v1.Pod{
		pod("guaranteed", "n", "rs", 10, guaranteed),
		pod("prio-high", "n", "rs", 10, prio(100), bestEffort),
		pod("burstable-small", "n", "rs", 10),
		pod("burstable-big", "n", "rs", 30),
		pod("besteffort", "n", "rs", 10, bestEffort),
		pod("prio-negative", "n", "rs", 10, prio(-5), guaranteed),
	}
	usageOf := map[string]float64{"burstable-small": 1, "burstable-big": 3}
	sortCandidates(pods, func(*v1.Pod) bool { return false }, func(p *v1.Pod) float64 { return usageOf[p.Name] })
	var got []string
	for _, p := range pods {
		got = append(got, p.Name)
	}
	// Priority first (−5 < 0 < 100), then QoS, then usage (3 before 1).
	want := []string{"prio-negative", "besteffort", "burstable-big", "burstable-small", "guaranteed", "prio-high"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
}
