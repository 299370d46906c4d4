package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/pki/pkitest"
	"github.com/ballast-sched/ballast/core/version"
)

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown provider", args: []string{"--provider=signalfx"}, want: "provider: Unsupported value"},
		{name: "metrics-server timeout of 0", args: []string{"--metrics-server-timeout=0s"}, want: "metricsServer.timeout: Invalid value"},
		{name: "negative metrics-server timeout", args: []string{"--metrics-server-timeout=-1s"}, want: "metricsServer.timeout: Invalid value"},
		{name: "prometheus without address", args: []string{"--provider=prometheus"}, want: "prometheus.address: Required"},
		{name: "bad query set", args: []string{"--provider=prometheus", "--prometheus-address=http://p:9090", "--prometheus-query-set=x"}, want: "querySet"},
		{name: "negative answer limit", args: []string{"--provider=prometheus", "--prometheus-address=http://p:9090", "--prometheus-max-response-bytes=-1"}, want: "prometheus.maxResponseBytes"},
		{name: "bearer token over plain http", args: []string{"--provider=prometheus", "--prometheus-address=http://p:9090", "--prometheus-bearer-token-file=/var/run/token"}, want: "prometheus.bearerTokenFile: Invalid value"},
		{name: "answer limit of 0", args: []string{"--provider=prometheus", "--prometheus-address=http://p:9090", "--prometheus-max-response-bytes=0"}, want: "prometheus.maxResponseBytes"},
		{name: "static usage with another provider", args: []string{"--static-usage=a=1:2"}, want: "staticUsage"},
		{name: "bad window", args: []string{"--windows=1m,later"}, want: "windows[1]"},
		{name: "window shorter than period", args: []string{"--provider=static", "--windows=10s"}, want: "windows[0]"},
		{name: "bad static entry", args: []string{"--provider=static", "--static-usage=a=x:1"}, want: "staticUsage[0]"},
		{name: "unknown flag", args: []string{"--frobnicate"}, want: "unknown flag"},
		{name: "bind address not an IP", args: []string{"--provider=static", "--bind-address=pod-ip"}, want: "bindAddress: Invalid value"},
		{name: "bind address with a port", args: []string{"--provider=static", "--bind-address=10.0.0.1:2020"}, want: "bindAddress: Invalid value"},
		{name: "listen address without a port", args: []string{"--provider=static", "--listen-address=10.0.0.1"}, want: "listenAddress: Invalid value"},
		{name: "metrics port out of range", args: []string{"--provider=static", "--metrics-address=:70000"}, want: "metricsAddress: Invalid value"},
		{name: "certificate without key", args: []string{"--provider=static", "--tls-cert-file=/tls/tls.crt"}, want: "tlsPrivateKeyFile: Required value"},
		{name: "key without certificate", args: []string{"--provider=static", "--tls-private-key-file=/tls/tls.key"}, want: "tlsCertFile: Required value"},
		{name: "unreadable key pair", args: []string{"--provider=static", "--static-usage=a=1:2", "--tls-cert-file=/nonexistent/tls.crt", "--tls-private-key-file=/nonexistent/tls.key"}, want: "--tls-cert-file/--tls-private-key-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.args, io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

// --version prints and returns without serving, before any other flag is
// checked: the listen address below is taken by nobody and never opened.
func TestRunVersion(t *testing.T) {
	var out strings.Builder
	if err := Run(context.Background(), []string{"--version", "--listen-address=:-1"}, &out, io.Discard, nil); err != nil {
		t.Fatalf("Run(--version) = %v", err)
	}
	// A test binary is linked without -X: the version is the default.
	if got, want := out.String(), version.Line("load-watcher")+"\n"; got != want || !strings.HasPrefix(got, "load-watcher dev") {
		t.Errorf("--version printed %q, want %q", got, want)
	}
}

func TestRunServesAndShutsDown(t *testing.T) {
	addr, stop := start(t, "--provider=static", "--static-usage=node-a=30:45,node-b=80:20",
		"--listen-address=127.0.0.1:0", "--period=50ms", "--windows=1m")
	defer stop()

	var body struct {
		Data struct {
			NodeMetricsMap map[string]json.RawMessage
		} `json:"data"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/watcher")
		if err == nil && resp.StatusCode == http.StatusOK {
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if resp != nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("/watcher never answered 200 (last: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(body.Data.NodeMetricsMap) != 2 {
		t.Errorf("NodeMetricsMap has %d nodes, want 2", len(body.Data.NodeMetricsMap))
	}
	for _, path := range []string{"/readyz", "/healthz", "/metrics"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %v %v", path, resp.StatusCode, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
}

// start runs the command with args and returns the API's address and a
// function that stops it and checks that it returned cleanly.
func start(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, args, io.Discard, io.Discard, func(addr string) { addrc <- addr }) }()
	select {
	case addr = <-addrc:
	case err := <-done:
		cancel()
		t.Fatalf("Run ended early: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return addr, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run after cancel: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
}

// TestRunServesTLSAndReadsBackWithTheClient serves HTTPS from a key pair on
// disk, with metrics on their own port, and reads usage back through the Go
// client trusting the certificate.
func TestRunServesTLSAndReadsBackWithTheClient(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := pkitest.SelfSigned(t, dir, "load-watcher")
	metricsAddr := freeAddr(t)
	addr, stop := start(t, "--provider=static", "--static-usage=node-a=30:45", "--period=50ms", "--windows=1m",
		"--listen-address=:0", "--bind-address=127.0.0.1", "--metrics-address=:"+portOf(t, metricsAddr),
		"--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile)
	defer stop()
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("listening on %s, want --bind-address 127.0.0.1", addr)
	}

	c, err := client.New(client.Config{Address: "https://" + addr, CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go c.Run(ctx)
	snap, err := client.WaitForSnapshot(ctx, c)
	if err != nil {
		t.Fatalf("no snapshot over TLS: %v (last error %v)", err, c.LastError())
	}
	if _, ok := snap.Nodes["node-a"]; !ok {
		t.Errorf("snapshot without node-a: %+v", snap.Nodes)
	}

	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP on the TLS port: status %d, want 400", resp.StatusCode)
		}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // test probe, like the kubelet's
	for path, want := range map[string]int{
		"https://" + addr + "/metrics":        http.StatusNotFound, // on its own port now
		"https://" + metricsAddr + "/metrics": http.StatusOK,
		"https://" + metricsAddr + "/watcher": http.StatusNotFound,
	} {
		resp, err := hc.Get(path)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: status %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
