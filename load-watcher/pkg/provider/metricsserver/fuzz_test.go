package metricsserver

import (
	"encoding/json"
	"testing"

	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// FuzzSamples feeds arbitrary NodeMetricsList JSON, as the API server could
// return it, through the conversion: it must never panic and never report
// a node it was not asked about.
func FuzzSamples(f *testing.F) {
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"},"timestamp":"2026-01-01T00:00:00Z","window":"15s","usage":{"cpu":"1500m","memory":"2Gi"}}]}`))
	f.Add([]byte(`{"items":[{"metadata":{"name":"a"},"usage":{"cpu":"-1","memory":"1e300"}}]}`))
	f.Add([]byte(`{"items":[]}`))
	nodes := []provider.Node{
		{Name: "a", Allocatable: provider.Quantities{MilliCPU: 2000, MemoryBytes: 4 << 30}},
		{Name: "b", Allocatable: provider.Quantities{MilliCPU: 0, MemoryBytes: 1}},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var list metricsv1beta1.NodeMetricsList
		if err := json.Unmarshal(body, &list); err != nil {
			return
		}
		for _, s := range Samples(list.Items, nodes) {
			if s.Node != "a" && s.Node != "b" {
				t.Fatalf("sample for unrequested node %q", s.Node)
			}
			if !s.HasCPU && !s.HasMemory {
				t.Fatalf("sample without values for %q", s.Node)
			}
		}
	})
}
