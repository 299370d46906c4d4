package loadawarebalance

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/ballast-sched/ballast/scheduler/pkg/loadscore"
)

// PodUsageSource reports what a running pod really uses. Projections of how
// much an eviction frees use it; without it (nil, or no answer for the pod)
// they fall back to the load model's estimate from the pod's requests.
type PodUsageSource interface {
	// PodUsage returns pod's current usage and whether it is known.
	PodUsage(ctx context.Context, pod *v1.Pod) (loadscore.Amount, bool)
}

// MetricsAPIPodUsage reads PodMetrics from metrics.k8s.io (metrics-server)
// one pod at a time: only the pods of hot nodes are asked for. Client is a
// REST client of the API server that serves metrics.k8s.io (the
// descheduler's own, through the aggregation layer).
type MetricsAPIPodUsage struct {
	Client rest.Interface
}

// NewMetricsAPIPodUsage reads PodMetrics through c's REST client.
func NewMetricsAPIPodUsage(c clientset.Interface) MetricsAPIPodUsage {
	if c == nil {
		return MetricsAPIPodUsage{}
	}
	return MetricsAPIPodUsage{Client: c.CoreV1().RESTClient()}
}

// PodUsage sums the containers' usage in the pod's PodMetrics. A missing
// metrics API, a pod not measured yet or any error all mean unknown.
func (m MetricsAPIPodUsage) PodUsage(ctx context.Context, pod *v1.Pod) (loadscore.Amount, bool) {
	if c, ok := m.Client.(*rest.RESTClient); m.Client == nil || ok && c == nil {
		// No client, or a fake clientset's, which has no REST client.
		return loadscore.Amount{}, false
	}
	path := fmt.Sprintf("/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods/%s", pod.Namespace, pod.Name)
	raw, err := m.Client.Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return loadscore.Amount{}, false
	}
	var pm metricsv1beta1.PodMetrics
	if err := json.Unmarshal(raw, &pm); err != nil || len(pm.Containers) == 0 {
		return loadscore.Amount{}, false
	}
	return podMetricsAmount(&pm), true
}

// podMetricsAmount sums a PodMetrics' containers.
func podMetricsAmount(pm *metricsv1beta1.PodMetrics) loadscore.Amount {
	var out loadscore.Amount
	for _, c := range pm.Containers {
		out.MilliCPU += c.Usage.Cpu().MilliValue()
		out.Memory += c.Usage.Memory().Value()
	}
	return out
}
