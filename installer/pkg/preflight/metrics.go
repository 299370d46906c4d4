// Package preflight checks what Ballast needs from a cluster before installing.
package preflight

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// MetricsAPIService is the APIService metrics-server registers.
const MetricsAPIService = "v1beta1.metrics.k8s.io"

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// MetricsServer reports whether the metrics API is served. When it is not,
// the returned error says why and what to do; load-watcher's default provider
// needs it.
func MetricsServer(ctx context.Context, client dynamic.Interface) error {
	obj, err := client.Resource(apiServices).Get(ctx, MetricsAPIService, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("APIService %s does not exist: metrics-server is not installed. "+
			"On k3s it is bundled unless the server runs with --disable=metrics-server (remove that); elsewhere install it "+
			"(https://github.com/kubernetes-sigs/metrics-server) or use Prometheus: --set load-watcher.provider=prometheus "+
			"--set load-watcher.prometheus.address=http://<prometheus>:9090", MetricsAPIService)
	}
	if err != nil {
		return fmt.Errorf("read APIService %s: %w", MetricsAPIService, err)
	}
	available, reason := availableCondition(obj)
	if !available {
		return fmt.Errorf("APIService %s is not Available (%s): check the metrics-server pod "+
			"(kubectl -n kube-system get pods -l k8s-app=metrics-server) and its logs", MetricsAPIService, reason)
	}
	return nil
}

func availableCondition(obj *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Available" {
			continue
		}
		return m["status"] == "True", fmt.Sprintf("%v: %v", m["reason"], m["message"])
	}
	return false, "no Available condition yet"
}
