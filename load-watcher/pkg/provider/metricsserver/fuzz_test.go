package metricsserver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

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

// FuzzNodeMetricsAnswer serves arbitrary bytes as the API server's answer to
// the List of NodeMetrics and reads them as load-watcher does: through the
// metrics clientset's own decoder, which is not encoding/json. The round
// must end with an error or with samples for requested nodes, each with a
// value, and never panic.
func FuzzNodeMetricsAnswer(f *testing.F) {
	item := func(name, usage string) string {
		return `{"metadata":{"name":"` + name + `"},"timestamp":"2026-01-01T00:00:00Z","window":"15s","usage":` + usage + `}`
	}
	list := func(items string) []byte {
		return []byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + items + `]}`)
	}
	f.Add(list(item("a", `{"cpu":"1500m","memory":"2Gi"}`) + "," + item("b", `{"cpu":"250m","memory":"512Mi"}`)))
	f.Add(list(item("a", `{"cpu":"-1","memory":"1e300"}`) + "," + item("gone", `{"cpu":"1"}`)))
	f.Add(list(item("a", `{"cpu":"9223372036854775807","memory":"0.000001m"}`)))
	f.Add(list(item("a", `{}`) + "," + item("a", `{"cpu":"1"}`)))
	f.Add(list(``))
	f.Add([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`))
	f.Add([]byte(`{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","items":{"a":1}}`))
	f.Add([]byte(`not json`))
	var body atomic.Pointer[[]byte]
	cs := apiServer(f, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != nodeMetricsPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	})
	p, err := New(Config{Client: cs, Timeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	nodes := []provider.Node{
		{Name: "a", Allocatable: provider.Quantities{MilliCPU: 2000, MemoryBytes: 4 << 30}},
		{Name: "b", Allocatable: provider.Quantities{MilliCPU: 0, MemoryBytes: 1}},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		samples, err := p.Sample(context.Background(), nodes)
		if err != nil && len(samples) > 0 {
			t.Fatalf("samples %+v with error %v", samples, err)
		}
		seen := map[string]bool{}
		for _, s := range samples {
			if s.Node != "a" && s.Node != "b" {
				t.Fatalf("sample for unrequested node %q", s.Node)
			}
			if seen[s.Node] {
				t.Fatalf("two samples for %q", s.Node)
			}
			seen[s.Node] = true
			if !s.HasCPU && !s.HasMemory {
				t.Fatalf("sample without values for %q", s.Node)
			}
			if s.Node == "b" && s.HasCPU {
				t.Fatalf("CPU for %q, whose allocatable CPU is unknown", s.Node)
			}
		}
	})
}
