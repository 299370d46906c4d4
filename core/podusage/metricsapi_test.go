package podusage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

const podMetricsJSON = `{"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1",
"metadata":{"name":"web-a","namespace":"apps"},"timestamp":"2026-11-23T12:00:00Z","window":"15s",
"containers":[{"name":"app","usage":{"cpu":"850m","memory":"600Mi"}},{"name":"proxy","usage":{"cpu":"50m","memory":"100Mi"}}]}`

func TestMetricsAPISumsContainersAndAsksForJSON(t *testing.T) {
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		if r.URL.Path != "/apis/metrics.k8s.io/v1beta1/namespaces/apps/pods/web-a" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(podMetricsJSON))
	}))
	defer srv.Close()
	// kube-scheduler's client asks for protobuf, which the metrics API does not speak.
	m, err := ForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/vnd.kubernetes.protobuf"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, ok := m.PodUsage(ctx, replica("web-a", "rs", 1))
	if want := (loadmodel.Amount{MilliCPU: 900, Memory: 700 << 20}); !ok || got != want {
		t.Errorf("PodUsage() = %+v, %v; want %+v, true", got, ok, want)
	}
	if accept != "application/json" {
		t.Errorf("Accept = %q, want application/json", accept)
	}
	if got, ok := m.PodUsage(ctx, replica("not-measured", "rs", 1)); ok {
		t.Errorf("PodUsage() of a pod without metrics = %+v, want unknown", got)
	}
}

func TestMetricsAPIWithoutClientKnowsNothing(t *testing.T) {
	for _, m := range []MetricsAPI{{}, NewMetricsAPI(nil), {Client: (*rest.RESTClient)(nil)}} {
		if _, ok := m.PodUsage(context.Background(), replica("p", "", 1)); ok {
			t.Errorf("%+v: PodUsage() known, want unknown", m)
		}
	}
	if m, err := ForConfig(nil); err != nil || m.Client != nil {
		t.Errorf("ForConfig(nil) = %+v, %v; want an empty reader", m, err)
	}
}
