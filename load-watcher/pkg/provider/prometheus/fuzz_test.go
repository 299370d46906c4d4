package prometheus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// FuzzQueryResponse serves arbitrary bodies as the Prometheus query API's
// answer: the provider must return an error or samples for requested
// nodes only, and never panic.
func FuzzQueryResponse(f *testing.F) {
	f.Add([]byte(vector(`{"metric":{"instance":"10.0.0.1:9100"},"value":[1767225600,"0.4"]}`)))
	f.Add([]byte(vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"NaN"]},{"metric":{"node":"agent-1"},"value":[1767225600,"-Inf"]}`)))
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1767225600,"1"]}}`))
	f.Add([]byte(`{"status":"error","errorType":"timeout","error":"query timed out"}`))
	f.Add([]byte(`{"status":"success","data":null}`))
	f.Add([]byte(`not json`))
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		samples, _ := p.Sample(context.Background(), testNodes)
		for _, s := range samples {
			switch s.Node {
			case "server-1", "agent-1", "agent-2":
			default:
				t.Fatalf("sample for unrequested node %q", s.Node)
			}
		}
	})
}
