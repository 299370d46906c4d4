package podusage

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// FuzzPodMetricsAnswer serves arbitrary bytes as metrics.k8s.io's answer,
// both to one pod's PodMetrics (MetricsAPI) and to the list of every pod's
// (Listing, feeding a Trend): nothing panics, a pod's usage is known only
// from an answer with containers, and from a list only when it names the
// pod.
func FuzzPodMetricsAnswer(f *testing.F) {
	f.Add([]byte(podMetricsJSON))
	f.Add([]byte(`{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + podMetricsJSON + `]}`))
	f.Add([]byte(`{"metadata":{"name":"web-a","namespace":"apps"},"containers":[{"name":"app","usage":{"cpu":"-1","memory":"1e300"}}]}`))
	f.Add([]byte(`{"metadata":{"name":"web-a","namespace":"apps"},"containers":[{"name":"app","usage":{"cpu":"9223372036854775807","memory":"9223372036854775807"}},{"name":"b","usage":{"cpu":"9223372036854775807"}}]}`))
	f.Add([]byte(`{"items":[{"metadata":{"name":"web-a","namespace":"apps"},"containers":[]},{"metadata":{"name":"web-a","namespace":"apps"},"containers":[{"usage":{}}]}]}`))
	f.Add([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	f.Add([]byte(`not json`))
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	// No client-side rate limit: the target asks thousands of times.
	m, err := ForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		f.Fatal(err)
	}
	pod := replica("web-a", "rs", 1)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		if _, ok := m.PodUsage(ctx, pod); ok {
			var pm metricsv1beta1.PodMetrics
			if err := json.Unmarshal(b, &pm); err != nil || len(pm.Containers) == 0 {
				t.Fatalf("usage known from an answer without containers (%v)", err)
			}
		}
		l := &Listing{Client: m.Client, Trend: &Trend{}}
		if _, ok := l.PodUsage(ctx, pod); ok {
			var list metricsv1beta1.PodMetricsList
			if err := json.Unmarshal(b, &list); err != nil {
				t.Fatalf("usage known from a list that does not decode: %v", err)
			}
			named := false
			for _, pm := range list.Items {
				named = named || pm.Namespace == pod.Namespace && pm.Name == pod.Name && len(pm.Containers) > 0
			}
			if !named {
				t.Fatalf("usage known from a list that does not name %s/%s with containers", pod.Namespace, pod.Name)
			}
		}
	})
}
