package podusage

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// Source reports what a running pod really uses.
type Source interface {
	// PodUsage returns pod's current usage and whether it is known.
	PodUsage(ctx context.Context, pod *v1.Pod) (loadmodel.Amount, bool)
}

// MetricsAPI reads PodMetrics from metrics.k8s.io one pod at a time. Client
// is a REST client of the server that serves metrics.k8s.io: the API server,
// through its aggregation layer, in a cluster.
type MetricsAPI struct {
	Client rest.Interface
}

// NewMetricsAPI reads PodMetrics through c's REST client.
func NewMetricsAPI(c clientset.Interface) MetricsAPI {
	if c == nil {
		return MetricsAPI{}
	}
	return MetricsAPI{Client: c.CoreV1().RESTClient()}
}

// ForConfig reads PodMetrics through the API server cfg points at. The
// metrics API speaks JSON only, so cfg's content type (kube-scheduler asks
// for protobuf) is not used.
func ForConfig(cfg *rest.Config) (MetricsAPI, error) {
	if cfg == nil {
		return MetricsAPI{}, nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		return MetricsAPI{}, fmt.Errorf("building the metrics.k8s.io client: %w", err)
	}
	return NewMetricsAPI(c), nil
}

// PodUsage sums the containers' usage in the pod's PodMetrics. A missing
// metrics API, a pod not measured yet or any error all mean unknown.
func (m MetricsAPI) PodUsage(ctx context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	if c, ok := m.Client.(*rest.RESTClient); m.Client == nil || ok && c == nil {
		// No client, or a fake clientset's, which has no REST client.
		return loadmodel.Amount{}, false
	}
	path := fmt.Sprintf("/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods/%s", pod.Namespace, pod.Name)
	raw, err := m.Client.Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return loadmodel.Amount{}, false
	}
	var pm metricsv1beta1.PodMetrics
	if err := json.Unmarshal(raw, &pm); err != nil || len(pm.Containers) == 0 {
		return loadmodel.Amount{}, false
	}
	return Sum(&pm), true
}

// Sum adds up a PodMetrics' containers.
func Sum(pm *metricsv1beta1.PodMetrics) loadmodel.Amount {
	var out loadmodel.Amount
	for _, c := range pm.Containers {
		out.MilliCPU += c.Usage.Cpu().MilliValue()
		out.Memory += c.Usage.Memory().Value()
	}
	return out
}
