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
)

// authLog records the Authorization header of every request a server gets.
type authLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *authLog) record(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.Header.Get("Authorization"))
}

func (l *authLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// answering is a Prometheus that answers every query with one sample.
func answering(log *authLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"0.5"]}`)))
	})
}

// redirecting sends every request on to target, keeping the method.
func redirecting(log *authLog, target func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		http.Redirect(w, r, target()+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The bearer token goes to the configured address only: a redirect to
// another host, or from https to http, is not followed, and the other host
// never sees the token.
func TestBearerTokenDoesNotFollowRedirects(t *testing.T) {
	token := writeFile(t, "token", []byte("s3cret"))
	tests := []struct {
		name       string
		first      func(http.Handler) *httptest.Server
		second     func(http.Handler) *httptest.Server
		allowHTTP  bool
		tokenFile  string
		wantReason string
	}{
		{name: "https to another host", first: httptest.NewTLSServer, second: httptest.NewTLSServer, tokenFile: token,
			wantReason: "the bearer token goes to"},
		{name: "https to http", first: httptest.NewTLSServer, second: httptest.NewServer, tokenFile: token,
			wantReason: "it leaves https"},
		{name: "https to http without a token", first: httptest.NewTLSServer, second: httptest.NewServer,
			wantReason: "it leaves https"},
		{name: "http to another host", first: httptest.NewServer, second: httptest.NewServer, tokenFile: token, allowHTTP: true,
			wantReason: "the bearer token goes to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var firstLog, secondLog authLog
			second := tt.second(answering(&secondLog))
			defer second.Close()
			first := tt.first(redirecting(&firstLog, func() string { return second.URL }))
			defer first.Close()
			cfg := Config{Address: first.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "q", MemoryQuery: "q",
				BearerTokenFile: tt.tokenFile, AllowInsecureBearerToken: tt.allowHTTP}
			if first.TLS != nil {
				cfg.CAFile = writeFile(t, "ca.crt", pemOf(first))
			}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Sample(context.Background(), testNodes)
			t.Logf("%v", err)
			if err == nil || !strings.Contains(err.Error(), tt.wantReason) {
				t.Errorf("Sample error = %v, want the redirect refused: %s", err, tt.wantReason)
			}
			if got := firstLog.get(); tt.tokenFile != "" && (len(got) == 0 || got[0] != "Bearer s3cret") {
				t.Errorf("the configured address saw Authorization %q, want the token", got)
			}
			for _, auth := range secondLog.get() {
				if auth != "" {
					t.Errorf("the host redirected to saw Authorization %q", auth)
				}
			}
			if got := secondLog.get(); len(got) > 0 {
				t.Errorf("the redirect was followed %d times", len(got))
			}
		})
	}
}

// A redirect within the configured address (a path behind a proxy) is
// followed, with the token.
func TestBearerTokenFollowsRedirectsWithinTheAddress(t *testing.T) {
	token := writeFile(t, "token", []byte("s3cret"))
	var log authLog
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		http.Redirect(w, r, "/prometheus"+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	mux.Handle("/prometheus/", answering(&log))
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "q", MemoryQuery: "q",
		BearerTokenFile: token, CAFile: writeFile(t, "ca.crt", pemOf(srv))})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Sample(context.Background(), testNodes); err != nil || len(got) != 1 {
		t.Fatalf("Sample = %+v, %v; want agent-1", got, err)
	}
	for i, auth := range log.get() {
		if auth != "Bearer s3cret" {
			t.Errorf("request %d carried Authorization %q, want the token", i, auth)
		}
	}
}

// Whatever sends a request to another address, the transport does not put
// the token on it.
func TestBearerTokenOnlyForItsAddress(t *testing.T) {
	token := writeFile(t, "token", []byte("s3cret"))
	var log authLog
	other := httptest.NewServer(answering(&log))
	defer other.Close()
	rt, err := newTransport(Config{Address: "https://prometheus.monitoring:9090", BearerTokenFile: token, MaxResponseBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, other.URL+"/api/v1/query?query=q", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := log.get(); len(got) != 1 || got[0] != "" {
		t.Errorf("another address saw Authorization %q", got)
	}
}
