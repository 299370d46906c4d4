package apiconnect

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func accept(t *testing.T, l net.Listener) {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func TestConnectWaitsForTheServer(t *testing.T) {
	addr := freeAddr(t)
	// The server comes back 600 ms after the first attempt was refused.
	go func() {
		time.Sleep(600 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		accept(t, l)
	}()
	c := &Connector{Service: addr, RetryEvery: 50 * time.Millisecond}
	start := time.Now()
	conn, err := c.Connect(context.Background(), addr)
	if err != nil {
		t.Fatalf("Connect = %v, want a connection once the server listens", err)
	}
	conn.Close()
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("connected after %s, before the server listened", waited)
	}
}

func TestConnectFallsBackToTheServersOwnAddress(t *testing.T) {
	direct, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accept(t, direct)
	service := freeAddr(t)
	c := &Connector{Service: service, Direct: []string{direct.Addr().String()}, MaxWait: time.Second}
	conn, err := c.Connect(context.Background(), service)
	if err != nil {
		t.Fatalf("Connect(Service) = %v, want the server's own address", err)
	}
	if got := conn.RemoteAddr().String(); got != direct.Addr().String() {
		t.Errorf("connected to %s, want %s", got, direct.Addr())
	}
	conn.Close()
	// Another target never goes to the API server's address.
	other := freeAddr(t)
	if conn, err := c.Connect(context.Background(), other); err == nil {
		conn.Close()
		t.Errorf("Connect(%s) reached %s", other, conn.RemoteAddr())
	}
}

func TestConnectGivesUpWithTheRequest(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c := &Connector{Service: addr, RetryEvery: 50 * time.Millisecond}
	if _, err := c.Connect(ctx, addr); err == nil {
		t.Fatal("Connect to nothing succeeded")
	}
}

func TestTunnel(t *testing.T) {
	// HTTP/2 over TLS through the tunnel, as client-go speaks to the API server.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "through "+r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	proxy := httptest.NewServer(&Connector{Service: srv.Listener.Addr().String()})
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	client := srv.Client()
	tr := client.Transport.(*http.Transport).Clone()
	tr.Proxy, tr.ForceAttemptHTTP2 = http.ProxyURL(proxyURL), true
	client.Transport = tr
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "through HTTP/2.0" {
		t.Errorf("body %q", body)
	}
	// Anything but CONNECT is refused.
	resp, err = http.Get(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET on the connector: %s", resp.Status)
	}
}

func TestStartOnlyInAPodWithoutProxy(t *testing.T) {
	for _, tc := range []struct {
		name        string
		host, proxy string
	}{
		{name: "outside a pod"},
		{name: "a proxy configured", host: "10.96.0.1", proxy: "http://proxy.lan:3128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", tc.host)
			t.Setenv("KUBERNETES_SERVICE_PORT", "443")
			t.Setenv("HTTPS_PROXY", tc.proxy)
			started, err := Start(context.Background(), "")
			if err != nil || started {
				t.Errorf("Start = %t, %v; want false, nil", started, err)
			}
		})
	}
}

func TestKeptAcrossRestarts(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "api-server")
	down := errors.New("connection refused")
	// The first start finds nothing kept and the server down.
	if got, err := kept(cache)(nil, down); err == nil || got != nil {
		t.Errorf("nothing kept, server down: %v, %v; want the error", got, err)
	}
	// The next learns the addresses and keeps them.
	want := []string{"10.213.0.1:6443", "10.213.0.2:6443"}
	if got, err := kept(cache)(want, nil); err != nil || !slices.Equal(got, want) {
		t.Errorf("server up: %v, %v", got, err)
	}
	// A restart while the server is down reads them.
	if got, err := kept(cache)(nil, down); err != nil || !slices.Equal(got, want) {
		t.Errorf("kept, server down: %v, %v; want %v", got, err, want)
	}
	// Without a file, nothing is kept.
	if got, err := kept("")(nil, down); err == nil || got != nil {
		t.Errorf("no file: %v, %v", got, err)
	}
}
