package loadmodel

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/usage"
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
	return ResourcesOf(pod).Estimate(o)
}

// containerResources are a container's CPU and memory requests and limits,
// 0 when not set.
type containerResources struct {
	reqCPU, limCPU, reqMem, limMem int64
}

// PodResources are the requests and limits of a pod's long-running
// containers, parsed once so that estimating with different options is
// plain arithmetic (the anti-herding cache estimates the same pods for every
// node scored).
type PodResources struct {
	containers []containerResources
	overhead   Amount
}

// ResourcesOf parses the requests and limits of pod's containers and
// sidecars and its overhead.
func ResourcesOf(pod *v1.Pod) PodResources {
	var r PodResources
	add := func(c *v1.Container) {
		r.containers = append(r.containers, containerResources{
			reqCPU: milli(c.Resources.Requests, v1.ResourceCPU), limCPU: milli(c.Resources.Limits, v1.ResourceCPU),
			reqMem: units(c.Resources.Requests, v1.ResourceMemory), limMem: units(c.Resources.Limits, v1.ResourceMemory),
		})
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
		r.overhead = Amount{MilliCPU: milli(pod.Spec.Overhead, v1.ResourceCPU), Memory: units(pod.Spec.Overhead, v1.ResourceMemory)}
	}
	return r
}

// Equal reports whether r and o are the same requests, limits and overhead.
func (r PodResources) Equal(o PodResources) bool {
	return r.overhead == o.overhead && slices.Equal(r.containers, o.containers)
}

// Estimate applies the rules of EstimatePod to parsed resources.
func (r PodResources) Estimate(o EstimateOptions) Amount {
	total := r.overhead
	for _, c := range r.containers {
		total.MilliCPU = addUpTo(total.MilliCPU, estimateOne(c.reqCPU, c.limCPU, o.RequestMultiplier, o.DefaultMilliCPU))
		total.Memory = addUpTo(total.Memory, estimateOne(c.reqMem, c.limMem, o.RequestMultiplier, o.DefaultMemory))
	}
	return total
}

func milli(l v1.ResourceList, name v1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.MilliValue()
	}
	return 0
}

func units(l v1.ResourceList, name v1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.Value()
	}
	return 0
}

// estimateOne estimates one resource of one container; 0 means not set.
func estimateOne(req, limit int64, multiplier float64, def int64) int64 {
	switch {
	case req > 0:
		est := scale(req, multiplier)
		if limit > 0 && est > limit {
			est = limit
		}
		return est
	case limit > 0:
		return limit
	default:
		return def
	}
}

// scale multiplies v by m, rounding to the nearest unit, up to
// math.MaxInt64; a multiplier that is not a positive finite number leaves v
// unchanged.
func scale(v int64, m float64) int64 {
	if m <= 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return v
	}
	// Converting a float64 beyond int64 is left to the platform (amd64
	// gives math.MinInt64): a large multiplier would make a pod weigh less
	// than nothing.
	if p := math.Round(float64(v) * m); p < math.MaxInt64 {
		return int64(p)
	}
	return math.MaxInt64
}

// addUpTo returns a + b for b ≥ 0, up to math.MaxInt64.
func addUpTo(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
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
