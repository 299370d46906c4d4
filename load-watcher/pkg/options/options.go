// Package options holds load-watcher's flags: their parsing, with the
// LOAD_WATCHER_* variables, and every check of them and of the collector's
// configuration they make. The command and its start-up check both go
// through Configure.
package options

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/prometheus"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/registry"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// envPrefix prefixes the environment variable of every flag:
// --prometheus-address is LOAD_WATCHER_PROMETHEUS_ADDRESS. A flag given on
// the command line wins over its variable.
const envPrefix = "LOAD_WATCHER_"

// Options are the command's flags.
type Options struct {
	Provider       string
	ListenAddress  string
	BindAddress    string
	MetricsAddress string
	TLSCertFile    string
	TLSKeyFile     string
	Period         time.Duration
	Windows        []string
	StaleAfter     time.Duration
	Kubeconfig     string
	MetricsServer  metricsserver.Config
	Prometheus     prometheus.Config
	StaticUsage    []string
	Version        bool
}

// Default returns the flags' defaults.
func Default() *Options {
	return &Options{
		Provider:      "metrics-server",
		ListenAddress: ":2020",
		Period:        collector.DefaultPeriod,
		Windows:       []string{"1m", "5m", "15m"},
		MetricsServer: metricsserver.Config{Timeout: metricsserver.DefaultTimeout},
		Prometheus: prometheus.Config{QuerySet: prometheus.QuerySetAuto, Timeout: prometheus.DefaultTimeout,
			MaxResponseBytes: prometheus.DefaultMaxResponseBytes},
	}
}

func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Provider, "provider", o.Provider, "Usage source: "+strings.Join(registry.Names(), ", ")+".")
	fs.StringVar(&o.ListenAddress, "listen-address", o.ListenAddress, "Address the HTTP API listens on.")
	fs.StringVar(&o.BindAddress, "bind-address", "", "IP address to listen on, e.g. the pod's IP; replaces the host of --listen-address and --metrics-address. Empty keeps them.")
	fs.StringVar(&o.MetricsAddress, "metrics-address", "", "Address /metrics is served on, apart from the API; empty serves it with the API on --listen-address.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "PEM certificate (chain) to serve HTTPS with; needs --tls-private-key-file. Reloaded when the file changes.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file.")
	fs.DurationVar(&o.Period, "period", o.Period, "Time between sampling rounds.")
	fs.StringSliceVar(&o.Windows, "windows", o.Windows, "Statistics windows, comma separated.")
	fs.DurationVar(&o.StaleAfter, "stale-after", 0, "A node whose newest sample is older is stale (default 3 × --period).")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig; the in-cluster configuration when empty.")
	fs.DurationVar(&o.MetricsServer.Timeout, "metrics-server-timeout", o.MetricsServer.Timeout, "Timeout of each sampling round's List of NodeMetrics (--provider=metrics-server).")
	fs.StringVar(&o.Prometheus.Address, "prometheus-address", "", "Prometheus base URL (--provider=prometheus).")
	fs.StringVar((*string)(&o.Prometheus.QuerySet), "prometheus-query-set", string(o.Prometheus.QuerySet), "Default queries: auto, node-exporter or kube-prometheus.")
	fs.StringVar(&o.Prometheus.CPUQuery, "prometheus-cpu-query", "", "PromQL returning each node's busy CPU fraction (0-1); replaces the query set's.")
	fs.StringVar(&o.Prometheus.MemoryQuery, "prometheus-memory-query", "", "PromQL returning each node's used memory fraction (0-1); replaces the query set's.")
	fs.StringVar(&o.Prometheus.BearerTokenFile, "prometheus-bearer-token-file", "", "File holding a bearer token sent to Prometheus; only to an https address unless --prometheus-allow-insecure-bearer-token.")
	fs.BoolVar(&o.Prometheus.AllowInsecureBearerToken, "prometheus-allow-insecure-bearer-token", false, "Send the bearer token to an http Prometheus address, in clear text (unsafe).")
	fs.StringVar(&o.Prometheus.CAFile, "prometheus-ca-file", "", "PEM CA bundle trusted for an https Prometheus.")
	fs.BoolVar(&o.Prometheus.InsecureSkipVerify, "prometheus-insecure-skip-verify", false, "Skip TLS verification of Prometheus (unsafe).")
	fs.DurationVar(&o.Prometheus.Timeout, "prometheus-timeout", o.Prometheus.Timeout, "Timeout of each Prometheus query; a sampling round ends after twice it.")
	fs.Int64Var(&o.Prometheus.MaxResponseBytes, "prometheus-max-response-bytes", o.Prometheus.MaxResponseBytes, "Largest Prometheus answer read, in bytes after decompression; a larger one fails its query.")
	fs.StringSliceVar(&o.StaticUsage, "static-usage", nil, "With --provider=static: node=cpu%:memory% entries, e.g. node-a=30:45,node-b=80:20 (demos; no cluster needed).")
	fs.BoolVar(&o.Version, "version", false, "Print the version and exit.")
}

// NewFlagSet returns the command's flags, klog's included.
func NewFlagSet(o *Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("load-watcher", pflag.ContinueOnError)
	o.AddFlags(fs)
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	return fs
}

// ApplyEnv sets every flag not given on the command line from its
// LOAD_WATCHER_* variable.
func ApplyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		name := envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := lookup(name); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("environment variable %s: %w", name, e)
			}
		}
	})
	return err
}

// ParseWindows parses and checks --windows.
func (o *Options) ParseWindows() ([]usage.Window, error) {
	return apiv1.ParseWindows(field.NewPath("windows"), o.Windows)
}

// Validate checks the flags that the packages do not check themselves.
func (o *Options) Validate() error {
	var errs field.ErrorList
	if names := sets.New(registry.Names()...); !names.Has(o.Provider) {
		errs = append(errs, field.NotSupported(field.NewPath("provider"), o.Provider, sets.List(names)))
	}
	// The collector reads a zero period as its default; a flag given 0
	// means something else, and is refused.
	if o.Period <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("period"), o.Period.String(), "must be positive"))
	}
	if o.StaleAfter < 0 {
		errs = append(errs, field.Invalid(field.NewPath("staleAfter"), o.StaleAfter.String(), "must be positive, or 0 for 3 × --period"))
	}
	if o.ListenAddress == "" {
		errs = append(errs, field.Required(field.NewPath("listenAddress"), ""))
	} else {
		errs = append(errs, validateHostPort(field.NewPath("listenAddress"), o.ListenAddress)...)
	}
	if o.MetricsAddress != "" {
		errs = append(errs, validateHostPort(field.NewPath("metricsAddress"), o.MetricsAddress)...)
	}
	if _, err := netip.ParseAddr(o.BindAddress); o.BindAddress != "" && err != nil {
		errs = append(errs, field.Invalid(field.NewPath("bindAddress"), o.BindAddress, "must be an IP address, e.g. 10.42.0.7 or ::"))
	}
	switch {
	case o.TLSCertFile != "" && o.TLSKeyFile == "":
		errs = append(errs, field.Required(field.NewPath("tlsPrivateKeyFile"), "with tlsCertFile"))
	case o.TLSCertFile == "" && o.TLSKeyFile != "":
		errs = append(errs, field.Required(field.NewPath("tlsCertFile"), "with tlsPrivateKeyFile"))
	}
	if len(o.StaticUsage) > 0 && o.Provider != static.Name {
		errs = append(errs, field.Invalid(field.NewPath("staticUsage"), strings.Join(o.StaticUsage, ","), "only with --provider=static"))
	}
	// The flags start from the defaults, so a zero or empty value was
	// given: it is checked as it is, not read as the default.
	if o.Provider == metricsserver.Name {
		if err := o.MetricsServer.Validate(field.NewPath("metricsServer")); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metricsServer"), "", err.Error()))
		}
	}
	if o.Provider == prometheus.Name {
		if err := o.Prometheus.Validate(field.NewPath("prometheus")); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("prometheus"), "", err.Error()))
		}
	}
	return errs.ToAggregate()
}

// validateHostPort checks a listen address: host (may be empty) and a
// numeric port.
func validateHostPort(path *field.Path, addr string) field.ErrorList {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return field.ErrorList{field.Invalid(path, addr, "want host:port, e.g. :2020")}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return field.ErrorList{field.Invalid(path, addr, "the port must be a number from 0 to 65535")}
	}
	return nil
}

// Bound returns addr with its host replaced by --bind-address, if set.
func (o *Options) Bound(addr string) string {
	if o.BindAddress == "" {
		return addr
	}
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(o.BindAddress, port)
}

// StaticProvider builds the static provider from --static-usage.
func (o *Options) StaticProvider() (*static.Provider, error) {
	p := static.New()
	var errs field.ErrorList
	for i, entry := range o.StaticUsage {
		path := field.NewPath("staticUsage").Index(i)
		node, vals, ok := strings.Cut(entry, "=")
		cpuS, memS, ok2 := strings.Cut(vals, ":")
		cpu, err1 := strconv.ParseFloat(cpuS, 64)
		mem, err2 := strconv.ParseFloat(memS, 64)
		if !ok || !ok2 || node == "" || err1 != nil || err2 != nil {
			errs = append(errs, field.Invalid(path, entry, "want node=cpu:memory, e.g. node-a=30:45"))
			continue
		}
		p.Set(node, cpu, mem)
	}
	return p, errs.ToAggregate()
}

// Configure completes the parsed flags fs of o from the environment
// (lookup) and checks them: it returns the collector's configuration, less
// its usage source. The command and its check both go through it.
func (o *Options) Configure(fs *pflag.FlagSet, lookup func(string) (string, bool)) (collector.Config, error) {
	if err := ApplyEnv(fs, lookup); err != nil {
		return collector.Config{}, err
	}
	if err := o.Validate(); err != nil {
		return collector.Config{}, fmt.Errorf("invalid flags: %w", err)
	}
	windows, err := o.ParseWindows()
	if err != nil {
		return collector.Config{}, fmt.Errorf("invalid flags: %w", err)
	}
	cfg := collector.Config{Period: o.Period, Windows: windows, StaleAfter: o.StaleAfter}
	// What collector.New checks, with stand-ins for the source it is given
	// at run time.
	checked := cfg
	stand := static.New()
	checked.Provider, checked.Nodes = stand, stand
	checked.SetDefaults()
	if err := checked.Validate(field.NewPath("collector")); err != nil {
		return collector.Config{}, fmt.Errorf("invalid flags: %w", err)
	}
	return cfg, nil
}
