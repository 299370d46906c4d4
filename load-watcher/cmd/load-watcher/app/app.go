// Package app is the load-watcher command: the wiring of its flags to a
// usage source, the HTTP servers and their lifetime.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/certs"
	"github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/options"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/registry"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
)

// shutdownTimeout bounds how long in-flight requests may finish on exit.
const shutdownTimeout = 10 * time.Second

// Main runs the command and exits; the only function that calls os.Exit.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	stop()
	klog.Flush()
	if err != nil {
		if !errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "load-watcher: %v\n", err)
		}
		os.Exit(1)
	}
}

// Run parses args and serves until ctx ends; with --version it prints the
// version to stdout and returns. When ready is not nil it receives the
// listener's address once the server accepts connections.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) error {
	o := options.Default()
	fs := options.NewFlagSet(o)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Version {
		_, err := fmt.Fprintln(stdout, version.Line("load-watcher"))
		return err
	}
	cfg, err := o.Configure(fs, os.LookupEnv)
	if err != nil {
		return err
	}
	setMemoryLimit(os.LookupEnv, cgroupMemoryMax)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Registerer = reg
	if err := wireSource(o, &cfg); err != nil {
		return err
	}
	col, err := collector.New(cfg)
	if err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}

	tlsCfg, err := tlsConfig(o)
	if err != nil {
		return err
	}
	// With a metrics port of its own, the API serves no /metrics.
	apiOpts := server.Options{Source: col, Gatherer: reg}
	if o.MetricsAddress != "" {
		apiOpts.Gatherer = nil
	}
	handler := server.NewHandler(apiOpts)
	servers := []*served{{name: "API", addr: o.Bound(o.ListenAddress), handler: handler}}
	if o.MetricsAddress != "" {
		servers = append(servers, &served{name: "metrics", addr: o.Bound(o.MetricsAddress), handler: server.NewMetricsHandler(reg)})
	}
	for _, s := range servers {
		if err := s.listen(tlsCfg); err != nil {
			closeAll(servers)
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1+len(servers))
	go func() { errc <- col.Run(ctx) }()
	go handler.WarmLoop(ctx)
	for _, s := range servers {
		go func() { errc <- s.serve() }()
	}
	eff := col.Config()
	klog.InfoS("Serving node usage", "address", servers[0].lis.Addr().String(), "tls", tlsCfg != nil, "provider", o.Provider,
		"period", eff.Period, "windows", o.Windows, "staleAfter", eff.StaleAfter)
	if len(servers) > 1 {
		klog.InfoS("Serving metrics", "address", servers[1].lis.Addr().String(), "tls", tlsCfg != nil)
	}
	if ready != nil {
		ready(servers[0].lis.Addr().String())
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	cancel()
	shutdownCtx, done := context.WithTimeout(context.Background(), shutdownTimeout)
	defer done()
	for _, s := range servers {
		if err := s.srv.Shutdown(shutdownCtx); err != nil {
			klog.ErrorS(err, "Shutting down the HTTP server", "server", s.name)
		}
	}
	klog.InfoS("Stopped")
	return runErr
}

// served is one listening HTTP server: the API, or metrics on their own port.
type served struct {
	name    string
	addr    string
	handler http.Handler
	lis     net.Listener
	srv     *http.Server
}

// listen opens the listener; with tlsCfg the server speaks HTTPS only.
func (s *served) listen(tlsCfg *tls.Config) error {
	lis, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listening on %s for the %s: %w", s.addr, s.name, err)
	}
	s.lis = lis
	s.srv = &http.Server{
		Handler:           s.handler,
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	return nil
}

func (s *served) serve() error {
	var err error
	if s.srv.TLSConfig != nil {
		err = s.srv.ServeTLS(s.lis, "", "") // the certificate comes from TLSConfig.GetCertificate
	} else {
		err = s.srv.Serve(s.lis)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("serving the %s: %w", s.name, err)
}

func closeAll(servers []*served) {
	for _, s := range servers {
		if s.lis != nil {
			_ = s.lis.Close()
		}
	}
}

// tlsConfig loads --tls-cert-file and --tls-private-key-file; nil without them.
func tlsConfig(o *options.Options) (*tls.Config, error) {
	if o.TLSCertFile == "" {
		return nil, nil
	}
	kp, err := certs.NewKeyPair(o.TLSCertFile, o.TLSKeyFile, func(err error) {
		klog.ErrorS(err, "Reloading the serving certificate failed; keeping the previous one")
	})
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file/--tls-private-key-file: %w", err)
	}
	return kp.ServerConfig(), nil
}

// wireSource sets the provider and the node source of cfg from the flags.
func wireSource(o *options.Options, cfg *collector.Config) error {
	if o.Provider == static.Name && o.Kubeconfig == "" && !inCluster() {
		p, err := o.StaticProvider()
		if err != nil {
			return fmt.Errorf("invalid flags: %w", err)
		}
		cfg.Provider, cfg.Nodes = p, p
		return nil
	}
	restCfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	opts := registry.Options{RestConfig: restCfg, MetricsServer: o.MetricsServer, Prometheus: o.Prometheus}
	if o.Provider == static.Name {
		if opts.Static, err = o.StaticProvider(); err != nil {
			return fmt.Errorf("invalid flags: %w", err)
		}
	}
	if cfg.Provider, err = registry.New(o.Provider, opts); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("creating Kubernetes client: %w", err)
	}
	cfg.Nodes = collector.NewInformerNodes(cs)
	return nil
}

func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading Kubernetes client configuration: %w", err)
	}
	cfg.UserAgent = "ballast-load-watcher"
	return cfg, nil
}
