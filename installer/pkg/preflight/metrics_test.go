package preflight

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func apiService(status string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": MetricsAPIService},
	}}
	if status != "" {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
			"type": "Available", "status": status, "reason": "FailedDiscoveryCheck", "message": "no response",
		}}}
	}
	return u
}

func TestMetricsServer(t *testing.T) {
	cases := []struct {
		name    string
		objects []runtime.Object
		wantErr string
	}{
		{name: "available", objects: []runtime.Object{apiService("True")}},
		{name: "missing", wantErr: "metrics-server is not installed"},
		{name: "not available", objects: []runtime.Object{apiService("False")}, wantErr: "is not Available (FailedDiscoveryCheck: no response)"},
		{name: "no condition yet", objects: []runtime.Object{apiService("")}, wantErr: "no Available condition yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{apiServices: "APIServiceList"}, tc.objects...)
			err := MetricsServer(context.Background(), client)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
