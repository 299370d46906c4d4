package balance

import "github.com/ballast-sched/ballast/core/moves"

// Workload names what keeps a pod running (moves.Workload): the scheduler
// reads the moves' workloads as the descheduler writes them.
type Workload = moves.Workload

// WorkloadOf returns the pod's controlling workload (moves.WorkloadOf).
var WorkloadOf = moves.WorkloadOf
