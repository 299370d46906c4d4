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
// through the descheduler's own API client, one pod at a time: only the
// pods of hot nodes are asked for.
type MetricsAPIPodUsage struct {
	Client clientset.Interface
}

// PodUsage sums the containers' usage in the pod's PodMetrics. A missing
// metrics API, a pod not measured yet or any error all mean unknown.
func (m MetricsAPIPodUsage) PodUsage(ctx context.Context, pod *v1.Pod) (loadscore.Amount, bool) {
	if m.Client == nil {
		return loadscore.Amount{}, false
	}
	rc := m.Client.CoreV1().RESTClient()
	if c, ok := rc.(*rest.RESTClient); !ok || c == nil {
		// Fake clientsets have no REST client.
		return loadscore.Amount{}, false
	}
	path := fmt.Sprintf("/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods/%s", pod.Namespace, pod.Name)
	raw, err := rc.Get().AbsPath(path).DoRaw(ctx)
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
