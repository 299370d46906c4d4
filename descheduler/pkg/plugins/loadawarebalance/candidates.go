package loadawarebalance

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/descheduler/pkg/utils"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

var qosRank = map[v1.PodQOSClass]int{
	v1.PodQOSBestEffort: 0,
	v1.PodQOSBurstable:  1,
	v1.PodQOSGuaranteed: 2,
}

// sortCandidates orders the pods of a hot node for eviction: lowest priority
// first, then the pods whose workload was not moved onto the node lately
// (moved), then BestEffort before Burstable before Guaranteed, then the pod
// contributing most to the hot resources. Ties go to the workload's name,
// then the pod's, so a cycle is reproducible: the names of a workload's pods
// are random, so a tie between two workloads must not be broken by them.
func sortCandidates(pods []*v1.Pod, moved func(*v1.Pod) bool, contribution func(*v1.Pod) float64) {
	type keyed struct {
		pod      *v1.Pod
		priority int32
		moved    int
		qos      int
		load     float64
		workload string
	}
	ks := make([]keyed, len(pods))
	for i, p := range pods {
		var prio int32
		if p.Spec.Priority != nil {
			prio = *p.Spec.Priority
		}
		var workload string
		if w, ok := balance.WorkloadOf(p); ok {
			workload = w.String()
		}
		var m int
		if moved(p) {
			m = 1
		}
		ks[i] = keyed{pod: p, priority: prio, moved: m, qos: qosRank[utils.GetPodQOS(p)], load: contribution(p), workload: workload}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		return cmp.Or(
			cmp.Compare(a.priority, b.priority),
			cmp.Compare(a.moved, b.moved),
			cmp.Compare(a.qos, b.qos),
			cmp.Compare(b.load, a.load),
			cmp.Compare(a.pod.Namespace, b.pod.Namespace),
			cmp.Compare(a.workload, b.workload),
			cmp.Compare(a.pod.Name, b.pod.Name),
		)
	})
	for i := range ks {
		pods[i] = ks[i].pod
	}
}
