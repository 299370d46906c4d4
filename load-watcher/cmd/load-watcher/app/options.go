// Package app is the load-watcher command: flags, wiring and the HTTP
// server's lifetime.
package app

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
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

// options are the command's flags.
type options struct {
	provider       string
	listenAddress  string
	bindAddress    string
	metricsAddress string
	tlsCertFile    string
	tlsKeyFile     string
	period         time.Duration
	windows        []string
	staleAfter     time.Duration
	kubeconfig     string
	metricsServer  metricsserver.Config
	prometheus     prometheus.Config
	staticUsage    []string
	version        bool
}

func defaultOptions() *options {
	return &options{
		provider:      "metrics-server",
		listenAddress: ":2020",
		period:        collector.DefaultPeriod,
		windows:       []string{"1m", "5m", "15m"},
		metricsServer: metricsserver.Config{Timeout: metricsserver.DefaultTimeout},
		prometheus: prometheus.Config{QuerySet: prometheus.QuerySetAuto, Timeout: prometheus.DefaultTimeout,
			MaxResponseBytes: prometheus.DefaultMaxResponseBytes},
	}
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.provider, "provider", o.provider, "Usage source: "+strings.Join(registry.Names(), ", ")+".")
	fs.StringVar(&o.listenAddress, "listen-address", o.listenAddress, "Address the HTTP API listens on.")
	fs.StringVar(&o.bindAddress, "bind-address", "", "IP address to listen on, e.g. the pod's IP; replaces the host of --listen-address and --metrics-address. Empty keeps them.")
	fs.StringVar(&o.metricsAddress, "metrics-address", "", "Address /metrics is served on, apart from the API; empty serves it with the API on --listen-address.")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "PEM certificate (chain) to serve HTTPS with; needs --tls-private-key-file. Reloaded when the file changes.")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file.")
	fs.DurationVar(&o.period, "period", o.period, "Time between sampling rounds.")
	fs.StringSliceVar(&o.windows, "windows", o.windows, "Statistics windows, comma separated.")
	fs.DurationVar(&o.staleAfter, "stale-after", 0, "A node whose newest sample is older is stale (default 3 × --period).")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig; the in-cluster configuration when empty.")
	fs.DurationVar(&o.metricsServer.Timeout, "metrics-server-timeout", o.metricsServer.Timeout, "Timeout of each sampling round's List of NodeMetrics (--provider=metrics-server).")
	fs.StringVar(&o.prometheus.Address, "prometheus-address", "", "Prometheus base URL (--provider=prometheus).")
	fs.StringVar((*string)(&o.prometheus.QuerySet), "prometheus-query-set", string(o.prometheus.QuerySet), "Default queries: auto, node-exporter or kube-prometheus.")
	fs.StringVar(&o.prometheus.CPUQuery, "prometheus-cpu-query", "", "PromQL returning each node's busy CPU fraction (0-1); replaces the query set's.")
	fs.StringVar(&o.prometheus.MemoryQuery, "prometheus-memory-query", "", "PromQL returning each node's used memory fraction (0-1); replaces the query set's.")
	fs.StringVar(&o.prometheus.BearerTokenFile, "prometheus-bearer-token-file", "", "File holding a bearer token sent to Prometheus; only to an https address unless --prometheus-allow-insecure-bearer-token.")
	fs.BoolVar(&o.prometheus.AllowInsecureBearerToken, "prometheus-allow-insecure-bearer-token", false, "Send the bearer token to an http Prometheus address, in clear text (unsafe).")
	fs.StringVar(&o.prometheus.CAFile, "prometheus-ca-file", "", "PEM CA bundle trusted for an https Prometheus.")
	fs.BoolVar(&o.prometheus.InsecureSkipVerify, "prometheus-insecure-skip-verify", false, "Skip TLS verification of Prometheus (unsafe).")
	fs.DurationVar(&o.prometheus.Timeout, "prometheus-timeout", o.prometheus.Timeout, "Timeout of each Prometheus query; a sampling round ends after twice it.")
	fs.Int64Var(&o.prometheus.MaxResponseBytes, "prometheus-max-response-bytes", o.prometheus.MaxResponseBytes, "Largest Prometheus answer read, in bytes after decompression; a larger one fails its query.")
	fs.StringSliceVar(&o.staticUsage, "static-usage", nil, "With --provider=static: node=cpu%:memory% entries, e.g. node-a=30:45,node-b=80:20 (demos; no cluster needed).")
	fs.BoolVar(&o.version, "version", false, "Print the version and exit.")
}

// newFlagSet returns the command's flags, klog's included.
func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("load-watcher", pflag.ContinueOnError)
	o.addFlags(fs)
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	return fs
}

// applyEnv sets every flag not given on the command line from its
// LOAD_WATCHER_* variable.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
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

// parseWindows parses and checks --windows.
func (o *options) parseWindows() ([]usage.Window, error) {
	return apiv1.ParseWindows(field.NewPath("windows"), o.windows)
}

// validate checks the flags that the packages do not check themselves.
func (o *options) validate() error {
	var errs field.ErrorList
	if names := sets.New(registry.Names()...); !names.Has(o.provider) {
		errs = append(errs, field.NotSupported(field.NewPath("provider"), o.provider, sets.List(names)))
	}
	// The collector reads a zero period as its default; a flag given 0
	// means something else, and is refused.
	if o.period <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("period"), o.period.String(), "must be positive"))
	}
	if o.staleAfter < 0 {
		errs = append(errs, field.Invalid(field.NewPath("staleAfter"), o.staleAfter.String(), "must be positive, or 0 for 3 × --period"))
	}
	if o.listenAddress == "" {
		errs = append(errs, field.Required(field.NewPath("listenAddress"), ""))
	} else {
		errs = append(errs, validateHostPort(field.NewPath("listenAddress"), o.listenAddress)...)
	}
	if o.metricsAddress != "" {
		errs = append(errs, validateHostPort(field.NewPath("metricsAddress"), o.metricsAddress)...)
	}
	if _, err := netip.ParseAddr(o.bindAddress); o.bindAddress != "" && err != nil {
		errs = append(errs, field.Invalid(field.NewPath("bindAddress"), o.bindAddress, "must be an IP address, e.g. 10.42.0.7 or ::"))
	}
	switch {
	case o.tlsCertFile != "" && o.tlsKeyFile == "":
		errs = append(errs, field.Required(field.NewPath("tlsPrivateKeyFile"), "with tlsCertFile"))
	case o.tlsCertFile == "" && o.tlsKeyFile != "":
		errs = append(errs, field.Required(field.NewPath("tlsCertFile"), "with tlsPrivateKeyFile"))
	}
	if len(o.staticUsage) > 0 && o.provider != static.Name {
		errs = append(errs, field.Invalid(field.NewPath("staticUsage"), strings.Join(o.staticUsage, ","), "only with --provider=static"))
	}
	// The flags start from the defaults, so a zero or empty value was
	// given: it is checked as it is, not read as the default.
	if o.provider == metricsserver.Name {
		if err := o.metricsServer.Validate(field.NewPath("metricsServer")); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metricsServer"), "", err.Error()))
		}
	}
	if o.provider == prometheus.Name {
		if err := o.prometheus.Validate(field.NewPath("prometheus")); err != nil {
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

// bound returns addr with its host replaced by --bind-address, if set.
func (o *options) bound(addr string) string {
	if o.bindAddress == "" {
		return addr
	}
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(o.bindAddress, port)
}

// staticProvider builds the static provider from --static-usage.
func (o *options) staticProvider() (*static.Provider, error) {
	p := static.New()
	var errs field.ErrorList
	for i, entry := range o.staticUsage {
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

func lookupEnv(name string) (string, bool) { return os.LookupEnv(name) }
