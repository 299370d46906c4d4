package moves

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Plan is a move whose replacement has not run yet: a new pod of the
// workload is expected on Node.
type Plan struct {
	// Pod is the evicted pod and At when: together they name the plan.
	Pod  types.UID
	Node string
	At   time.Time
}

// Plans returns, per workload, the moves made less than validity before now
// whose replacement has not been seen running (LandedOn empty), oldest
// first: where the descheduler expects the workload's next pods.
func Plans(saved []Saved, now time.Time, validity time.Duration) map[Workload][]Plan {
	out := map[Workload][]Plan{}
	for _, m := range saved {
		if m.LandedOn != "" || m.Destination == "" || now.Sub(m.At) >= validity {
			continue
		}
		out[m.Workload] = append(out[m.Workload], Plan{Pod: m.Pod, Node: m.Destination, At: m.At})
	}
	return out
}
