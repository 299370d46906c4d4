// Package promserver runs a real Prometheus server (the Debian package's
// binary) for tests: on a free loopback port, with temporary storage and the
// configuration the test writes, and asks it queries through its HTTP API.
package promserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// ConfigFile is the name Start gives the configuration among the files.
const ConfigFile = "prometheus.yml"

// Binary finds the prometheus binary: missing is a skip on a developer
// machine and a failure in CI.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("prometheus binary not found (install the Debian package prometheus): %v", err)
		}
		t.Skipf("prometheus binary not found (apt-get install prometheus): %v", err)
	}
	return bin
}

// Server is a running Prometheus.
type Server struct {
	// Addr is its loopback host:port.
	Addr string
	// Dir holds its files, storage and log.
	Dir string
}

// Start runs the prometheus binary bin with files written to a temporary
// directory (files[ConfigFile] is its configuration; the others, such as
// rule files, are referred to by name), waits until it is ready and stops
// it when the test ends, printing its log if the test failed.
func Start(t testing.TB, bin string, files map[string]string) *Server {
	t.Helper()
	if _, ok := files[ConfigFile]; !ok {
		t.Fatalf("promserver.Start: no %s among the files", ConfigFile)
	}
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeLoopbackAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+filepath.Join(dir, ConfigFile),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting prometheus: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			if log, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("prometheus log:\n%s", log)
			}
		}
		_ = logFile.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &Server{Addr: addr, Dir: dir}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready after 30s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Series is one series of an instant query's answer.
type Series struct {
	Metric map[string]string `json:"metric"`
	// Value is [unix time, "value"].
	Value []any `json:"value"`
}

// Query evaluates expr now and returns its series (a scalar or string
// answer is an error: dashboards plot vectors).
func (s *Server) Query(ctx context.Context, expr string) ([]Series, error) {
	u := "http://" + s.Addr + "/api/v1/query?" + url.Values{"query": {expr}}.Encode()
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := s.get(ctx, u, &answer); err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	if answer.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", expr, answer.Error)
	}
	if answer.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: a %s, not a vector", expr, answer.Data.ResultType)
	}
	var series []Series
	if err := json.Unmarshal(answer.Data.Result, &series); err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	return series, nil
}

// Target is one scrape target as /api/v1/targets reports it.
type Target struct {
	ScrapePool string            `json:"scrapePool"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Labels     map[string]string `json:"labels"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
}

// Targets returns the active scrape targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	var answer struct {
		Data struct {
			ActiveTargets []Target `json:"activeTargets"`
		} `json:"data"`
	}
	if err := s.get(ctx, "http://"+s.Addr+"/api/v1/targets?state=active", &answer); err != nil {
		return nil, fmt.Errorf("listing targets: %w", err)
	}
	return answer.Data.ActiveTargets, nil
}

func (s *Server) get(ctx context.Context, u string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("%s: %w: %.200s", resp.Status, err, body)
	}
	return nil
}

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}
