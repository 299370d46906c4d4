package loadscore

import (
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// Amount is a quantity of CPU and memory in absolute units.
type Amount struct {
	// MilliCPU is CPU in millicores.
	MilliCPU int64
	// Memory is memory in bytes.
	Memory int64
}

// Add returns the sum of a and b.
func (a Amount) Add(b Amount) Amount {
	return Amount{MilliCPU: a.MilliCPU + b.MilliCPU, Memory: a.Memory + b.Memory}
}

// Of returns the amount of resource r (millicores for CPU, bytes for memory).
func (a Amount) Of(r usage.Resource) int64 {
	switch r {
	case usage.CPU:
		return a.MilliCPU
	case usage.Memory:
		return a.Memory
	}
	return 0
}

// EstimateOptions says how to guess the usage of a pod that has no history.
type EstimateOptions struct {
	// RequestMultiplier scales a container's request; 1 means "uses what it asks for".
	RequestMultiplier float64
	// DefaultMilliCPU is assumed for a container without a CPU request or limit.
	DefaultMilliCPU int64
	// DefaultMemory is assumed for a container without a memory request or limit.
	DefaultMemory int64
}

// DefaultEstimateOptions are the defaults of LoadAware's podEstimate args:
// requests as they are, 100m CPU and 200Mi memory for containers without any.
var DefaultEstimateOptions = EstimateOptions{RequestMultiplier: 1, DefaultMilliCPU: 100, DefaultMemory: 200 << 20}

// EstimatePod returns the usage a pod is expected to add to a node before its
// own usage shows up in the node's samples. For every container, and every
// restartable init container (sidecar), and each resource:
//
//	estimate = min(request × multiplier, limit)   when a request is set (limit only if set)
//	estimate = limit                              when only a limit is set
//	estimate = default                            when neither is set
//
// and the pod's overhead is added. Ordinary init containers are ignored: they
// finish before the pod reaches its steady usage.
func EstimatePod(pod *v1.Pod, o EstimateOptions) Amount {
	var total Amount
	add := func(c *v1.Container) {
		total.MilliCPU += estimateOne(c.Resources, v1.ResourceCPU, o.RequestMultiplier, o.DefaultMilliCPU)
		total.Memory += estimateOne(c.Resources, v1.ResourceMemory, o.RequestMultiplier, o.DefaultMemory)
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	if pod.Spec.Overhead != nil {
		total.MilliCPU += pod.Spec.Overhead.Cpu().MilliValue()
		total.Memory += pod.Spec.Overhead.Memory().Value()
	}
	return total
}

func estimateOne(rr v1.ResourceRequirements, name v1.ResourceName, multiplier float64, def int64) int64 {
	value := func(l v1.ResourceList) (int64, bool) {
		q, ok := l[name]
		if !ok || q.IsZero() {
			return 0, false
		}
		if name == v1.ResourceCPU {
			return q.MilliValue(), true
		}
		return q.Value(), true
	}
	req, hasReq := value(rr.Requests)
	limit, hasLimit := value(rr.Limits)
	switch {
	case hasReq:
		est := scale(req, multiplier)
		if hasLimit && est > limit {
			est = limit
		}
		return est
	case hasLimit:
		return limit
	default:
		return def
	}
}

// scale multiplies v by m, rounding to the nearest unit; a multiplier that is
// not a positive finite number leaves v unchanged.
func scale(v int64, m float64) int64 {
	if m <= 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return v
	}
	return int64(math.Round(float64(v) * m))
}

// PodRequests returns the pod's effective CPU and memory requests as the
// scheduler accounts them: the larger of the sum over containers (plus
// sidecars) and any single init container, plus overhead.
func PodRequests(pod *v1.Pod) Amount {
	var sum Amount
	for i := range pod.Spec.Containers {
		sum = sum.Add(requestsOf(&pod.Spec.Containers[i]))
	}
	var initMax, sidecars Amount
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := requestsOf(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecars = sidecars.Add(r)
			continue
		}
		// An ordinary init container runs next to the sidecars started before it.
		initMax.MilliCPU = max(initMax.MilliCPU, r.MilliCPU+sidecars.MilliCPU)
		initMax.Memory = max(initMax.Memory, r.Memory+sidecars.Memory)
	}
	sum = sum.Add(sidecars)
	sum.MilliCPU = max(sum.MilliCPU, initMax.MilliCPU)
	sum.Memory = max(sum.Memory, initMax.Memory)
	if pod.Spec.Overhead != nil {
		sum.MilliCPU += pod.Spec.Overhead.Cpu().MilliValue()
		sum.Memory += pod.Spec.Overhead.Memory().Value()
	}
	return sum
}

func requestsOf(c *v1.Container) Amount {
	return Amount{MilliCPU: c.Resources.Requests.Cpu().MilliValue(), Memory: c.Resources.Requests.Memory().Value()}
}
