package prometheus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// fakeAPI answers PromQL queries with canned bodies, keyed by query, and
// records the Authorization header it saw.
type fakeAPI struct {
	mu      sync.Mutex
	bodies  map[string]string
	auth    string
	queries []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	q := r.Form.Get("query")
	f.mu.Lock()
	f.auth = r.Header.Get("Authorization")
	f.queries = append(f.queries, q)
	body, ok := f.bodies[q]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"unexpected query"}`))
		return
	}
	_, _ = w.Write([]byte(body))
}

func vector(results string) string {
	return `{"status":"success","data":{"resultType":"vector","result":[` + results + `]}}`
}

const emptyVector = `{"status":"success","data":{"resultType":"vector","result":[]}}`

var testNodes = []provider.Node{
	{Name: "server-1", InternalIP: "10.0.0.1",
		Capacity: provider.Quantities{MilliCPU: 4000, MemoryBytes: 1000}, Allocatable: provider.Quantities{MilliCPU: 3200, MemoryBytes: 800}},
	{Name: "agent-1", InternalIP: "10.0.0.2"},
	{Name: "agent-2", InternalIP: "10.0.0.3"},
}

func TestSampleKubePrometheusRules(t *testing.T) {
	api := &fakeAPI{bodies: map[string]string{
		"instance:node_cpu:ratio": vector(
			`{"metric":{"instance":"10.0.0.1:9100"},"value":[1767225600,"0.4"]},` +
				`{"metric":{"instance":"agent-1"},"value":[1767225600,"0.25"]},` +
				`{"metric":{"instance":"10.9.9.9:9100"},"value":[1767225600,"0.9"]}`),
		"instance:node_memory_utilisation:ratio": vector(
			`{"metric":{"node":"server-1","instance":"x"},"value":[1767225601,"0.5"]}`),
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetKubePrometheus})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Sample(context.Background(), testNodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Sample{
		// 0.4 of 4 cores = 1.6 cores of 3.2 allocatable = 50 %;
		// 0.5 of 1000 bytes = 500 of 800 allocatable = 62.5 %.
		{Node: "server-1", Time: time.Unix(1767225601, 0), CPU: 50, Memory: 62.5, HasCPU: true, HasMemory: true},
		// Unknown capacity: the fraction itself, in percent. No memory series.
		{Node: "agent-1", Time: time.Unix(1767225600, 0), CPU: 25, HasCPU: true},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Sample (-want,+got):\n%s", diff)
	}
}

func TestSampleAutoFallsBackToNodeExporter(t *testing.T) {
	ne := DefaultQueries[QuerySetNodeExporter]
	api := &fakeAPI{bodies: map[string]string{
		"instance:node_cpu:ratio":                emptyVector,
		"instance:node_memory_utilisation:ratio": emptyVector,
		ne.CPU:                                   vector(`{"metric":{"instance":"10.0.0.3:9100"},"value":[1767225600,"0.1"]}`),
		ne.Memory:                                vector(`{"metric":{"instance":"10.0.0.3:9100"},"value":[1767225600,"0.2"]}`),
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	p, err := New(Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		got, err := p.Sample(context.Background(), testNodes)
		if err != nil {
			t.Fatal(err)
		}
		want := []provider.Sample{{Node: "agent-2", Time: time.Unix(1767225600, 0), CPU: 10, Memory: 20, HasCPU: true, HasMemory: true}}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("round %d (-want,+got):\n%s", round, diff)
		}
	}
	// Round one tries the rules then node-exporter (4 queries); round two
	// goes straight to node-exporter (2 queries).
	if got := len(api.queries); got != 6 {
		t.Errorf("queries sent = %d (%q), want 6", got, api.queries)
	}
}

func TestSamplePartialFailureKeepsOtherResource(t *testing.T) {
	api := &fakeAPI{bodies: map[string]string{
		"my_cpu": vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"0.3"]}`),
		// my_mem is unknown to the fake: the query fails.
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "my_cpu", MemoryQuery: "my_mem"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Sample(context.Background(), testNodes)
	if err == nil {
		t.Errorf("want the memory query's error")
	}
	want := []provider.Sample{{Node: "agent-1", Time: time.Unix(1767225600, 0), CPU: 30, HasCPU: true}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Sample (-want,+got):\n%s", diff)
	}
}

func TestBearerTokenIsReadFromFile(t *testing.T) {
	api := &fakeAPI{bodies: map[string]string{"q": emptyVector}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "q", MemoryQuery: "q", BearerTokenFile: tokenFile,
		AllowInsecureBearerToken: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Sample(context.Background(), testNodes); err != nil {
		t.Fatal(err)
	}
	if api.auth != "Bearer s3cret" {
		t.Errorf("Authorization = %q, want %q", api.auth, "Bearer s3cret")
	}
	// A rotated token is used without rebuilding the provider.
	if err := os.WriteFile(tokenFile, []byte("rotated"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Sample(context.Background(), testNodes); err != nil {
		t.Fatal(err)
	}
	if api.auth != "Bearer rotated" {
		t.Errorf("Authorization after rotation = %q, want %q", api.auth, "Bearer rotated")
	}
}

func TestNewRejectsBadTLSFiles(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.crt")
	_ = os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	token := filepath.Join(dir, "token")
	_ = os.WriteFile(token, []byte("s3cret"), 0o600)
	for name, cfg := range map[string]Config{
		"missing CA file":   {Address: "https://p:9090", CAFile: filepath.Join(dir, "absent")},
		"CA file not PEM":   {Address: "https://p:9090", CAFile: notPEM},
		"missing token":     {Address: "https://p:9090", BearerTokenFile: filepath.Join(dir, "absent")},
		"token over http":   {Address: "http://p:9090", BearerTokenFile: token},
		"unsupported query": {Address: "https://p:9090", QuerySet: "graphite"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}

func TestTLSWithCAFile(t *testing.T) {
	api := &fakeAPI{bodies: map[string]string{"q": vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"0.5"]}`)}}
	srv := httptest.NewTLSServer(api)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pemOf(srv), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"CA file":              {CAFile: ca},
		"insecure skip verify": {InsecureSkipVerify: true},
	} {
		cfg.Address, cfg.QuerySet, cfg.CPUQuery, cfg.MemoryQuery = srv.URL, QuerySetNodeExporter, "q", "q"
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := p.Sample(context.Background(), testNodes)
		if err != nil || len(got) != 1 {
			t.Errorf("%s: Sample = %v, %v; want one sample", name, got, err)
		}
	}
	p, _ := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "q", MemoryQuery: "q"})
	if _, err := p.Sample(context.Background(), testNodes); err == nil {
		t.Errorf("untrusted certificate: want error")
	}
}

// A custom query that returns percent instead of a fraction is refused: read
// as a fraction, 37 would be 3700 % and filter every node.
func TestCustomQueryInPercentIsRefused(t *testing.T) {
	api := &fakeAPI{bodies: map[string]string{
		"cpu_percent":  vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"37.5"]},{"metric":{"node":"agent-2"},"value":[1767225600,"12"]}`),
		"mem_fraction": vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"0.5"]},{"metric":{"node":"agent-2"},"value":[1767225600,"1.02"]}`),
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "cpu_percent", MemoryQuery: "mem_fraction"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Sample(context.Background(), testNodes)
	if err == nil || !strings.Contains(err.Error(), "not percent") || !strings.Contains(err.Error(), "cpu_percent") {
		t.Fatalf("err = %v, want the CPU query refused as percent", err)
	}
	// Memory, in fractions (one node slightly above 1 is not percent), is kept; CPU is missing.
	for _, s := range got {
		if s.HasCPU {
			t.Errorf("node %s has CPU %v from a percent query", s.Node, s.CPU)
		}
		if !s.HasMemory {
			t.Errorf("node %s lost its memory sample", s.Node)
		}
	}
	if len(got) != 2 {
		t.Errorf("samples for %d nodes, want 2", len(got))
	}
}
