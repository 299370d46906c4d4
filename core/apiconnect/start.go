package apiconnect

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Start serves a Connector on loopback and points HTTPS_PROXY at it, when
// the process runs in a pod (KUBERNETES_SERVICE_HOST is set) and no HTTPS
// proxy is configured; it says whether it did. It asks the API server for
// its own addresses first, through the Service, and keeps them in cache
// when that names a file: a process that starts while the API server is
// down (a leader restarted after it lost its lease) reads them there. Call
// it before the process makes its first HTTPS request: Go reads HTTPS_PROXY
// once.
func Start(ctx context.Context, cache string) (bool, error) {
	logger := klog.FromContext(ctx)
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return false, nil
	}
	if os.Getenv("HTTPS_PROXY") != "" || os.Getenv("https_proxy") != "" {
		logger.Info("An HTTPS proxy is configured: reaching the API server through it, without waiting for it across restarts")
		return false, nil
	}
	c := &Connector{Service: net.JoinHostPort(host, port)}
	direct, err := kept(cache)(advertised(ctx))
	if err != nil {
		logger.Info("Could not learn or keep the API server's own address", "known", direct, "err", err)
	}
	c.Direct = direct
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false, fmt.Errorf("listening for the API server connector: %w", err)
	}
	proxy := &url.URL{Scheme: "http", Host: l.Addr().String()}
	if err := os.Setenv("HTTPS_PROXY", proxy.String()); err != nil {
		l.Close()
		return false, err
	}
	// Go caches the environment's proxy at its first use: if anything
	// used it already, the setting above is not seen.
	probe := &http.Request{URL: &url.URL{Scheme: "https", Host: c.Service}}
	if got, err := http.ProxyFromEnvironment(probe); err != nil || got == nil || got.Host != proxy.Host {
		l.Close()
		_ = os.Unsetenv("HTTPS_PROXY")
		logger.Info("HTTPS_PROXY was read before the API server connector started; connections go straight to the API server")
		return false, nil
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	logger.Info("Reaching the API server through a connector that waits for it across restarts", "service", c.Service, "direct", c.Direct)
	return true, nil
}

// kept returns a function that passes on the addresses it is given and
// keeps them in cache (a file; none when empty), or, given an error,
// returns those cache kept, if any.
func kept(cache string) func([]string, error) ([]string, error) {
	return func(addrs []string, err error) ([]string, error) {
		if cache == "" {
			return addrs, err
		}
		if err == nil {
			return addrs, os.WriteFile(cache, []byte(strings.Join(addrs, "\n")), 0o600)
		}
		raw, rerr := os.ReadFile(cache)
		if rerr != nil || len(strings.Fields(string(raw))) == 0 {
			return nil, err
		}
		return strings.Fields(string(raw)), nil
	}
}

// advertised asks the API server, through the Service and without a proxy,
// for the addresses it advertises to clients (the Service's endpoint).
func advertised(ctx context.Context) ([]string, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, err
	}
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	cfg.Timeout = 5 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/api").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var versions metav1.APIVersions
	if err := json.Unmarshal(raw, &versions); err != nil {
		return nil, fmt.Errorf("reading /api: %w", err)
	}
	var out []string
	for _, a := range versions.ServerAddressByClientCIDRs {
		if _, _, err := net.SplitHostPort(a.ServerAddress); err == nil && !slices.Contains(out, a.ServerAddress) {
			out = append(out, a.ServerAddress)
		}
	}
	return out, nil
}
