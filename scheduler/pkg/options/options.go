// Package options holds the flags ballast-scheduler adds to kube-scheduler's:
// how to reach load-watcher, how old usage may be, the leader's lease, the
// API server connector. The command binds them; the start-up check parses
// and validates them as the command does.
package options

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Modes of reaching load-watcher.
const (
	// ModeService reads usage from a load-watcher server over HTTP.
	ModeService = "service"
	// ModeLibrary runs load-watcher's collector inside the scheduler.
	ModeLibrary = "library"
)

// Flag defaults.
const (
	DefaultLoadWatcherAddress = "http://ballast-load-watcher:2020"
	DefaultStaleAfter         = 90 * time.Second
)

// Options are Ballast's flags, added to kube-scheduler's.
type Options struct {
	// LoadWatcherAddress is the load-watcher URL in service mode.
	LoadWatcherAddress string
	// LoadWatcherCAFile is a PEM CA bundle that signed an https load-watcher's certificate.
	LoadWatcherCAFile string
	// LoadWatcherMode is ModeService or ModeLibrary.
	LoadWatcherMode string
	// StaleAfter is how old a node's newest sample may be before the
	// plugins stop trusting it.
	StaleAfter time.Duration
	// LeaderLease is the namespace/name of the Lease the scheduler's leader
	// election holds; empty: a crashed leader's lease runs out.
	LeaderLease string
	// WaitForAPIServer reaches the API server, in a pod, through
	// apiconnect's connector.
	WaitForAPIServer bool
	// APIServerCache is the file the connector keeps the API server's own
	// addresses in, across the container's restarts.
	APIServerCache string
	// ExplainAddress is the loopback address the explain endpoint listens
	// on; empty: not served.
	ExplainAddress string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{LoadWatcherAddress: DefaultLoadWatcherAddress, LoadWatcherMode: ModeService, StaleAfter: DefaultStaleAfter,
		WaitForAPIServer: true, ExplainAddress: net.JoinHostPort("127.0.0.1", strconv.Itoa(explanation.DefaultPort))}
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.LoadWatcherAddress, "load-watcher-address", o.LoadWatcherAddress,
		"URL of the load-watcher serving node usage. Empty together with --load-watcher-mode=library runs the collector in the scheduler.")
	fs.StringVar(&o.LoadWatcherCAFile, "load-watcher-ca-file", "",
		"PEM CA bundle that signed the certificate of an https --load-watcher-address; empty means the system roots.")
	fs.StringVar(&o.LoadWatcherMode, "load-watcher-mode", o.LoadWatcherMode,
		"How to reach load-watcher: service (HTTP, one load-watcher for the cluster) or library (collector in-process, reading metrics-server).")
	fs.DurationVar(&o.StaleAfter, "load-watcher-stale-after", o.StaleAfter,
		"Age after which a node's usage is stale: the plugins then place by requests on that node.")
	fs.BoolVar(&o.WaitForAPIServer, "wait-for-api-server", o.WaitForAPIServer,
		"In a pod without HTTPS_PROXY, reach the API server through a connector in the process: a connection it refuses while it restarts "+
			"waits for it, so that watches resume the moment it is back instead of after client-go's back-off, and goes to the server's "+
			"own address while the kubernetes Service leads nowhere (kube-proxy has not yet seen the server come back).")
	fs.StringVar(&o.APIServerCache, "api-server-cache", o.APIServerCache,
		"File in which --wait-for-api-server keeps the API server's own addresses across the container's restarts (on an emptyDir), "+
			"for a scheduler that restarts while the API server is down. Empty: not kept.")
	fs.StringVar(&o.ExplainAddress, "explain-address", o.ExplainAddress,
		"Loopback address (host:port) on which the scheduler explains where it would place a pod and why, for `ballast explain pod`, "+
			"which reaches it through the API server (pods/portforward). Empty: not served.")
	fs.StringVar(&o.LeaderLease, "leader-lease", o.LeaderLease,
		"namespace/name of the Lease the leader election holds (the configuration's leaderElection resourceNamespace/resourceName). "+
			"Every replica then releases it as soon as the kubelet reports that the container the holder ran in has ended since it took the lease, "+
			"instead of waiting for it to run out. Empty: off.")
}

// Lease splits LeaderLease; ok is false when it is empty.
func (o *Options) Lease() (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(o.LeaderLease, "/")
	return namespace, name, ok
}

// Validate reports every invalid flag at once.
func (o *Options) Validate() error {
	var errs field.ErrorList
	switch o.LoadWatcherMode {
	case ModeService:
		if o.LoadWatcherAddress == "" {
			errs = append(errs, field.Required(field.NewPath("--load-watcher-address"), "required in service mode"))
		}
		if o.LoadWatcherCAFile != "" && !strings.HasPrefix(o.LoadWatcherAddress, "https://") {
			errs = append(errs, field.Invalid(field.NewPath("--load-watcher-ca-file"), o.LoadWatcherCAFile, "only with an https:// --load-watcher-address"))
		}
	case ModeLibrary:
		if o.LoadWatcherAddress != "" {
			errs = append(errs, field.Invalid(field.NewPath("--load-watcher-address"), o.LoadWatcherAddress,
				"must be empty in library mode (the collector runs in-process)"))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("--load-watcher-mode"), o.LoadWatcherMode, []string{ModeLibrary, ModeService}))
	}
	if o.LeaderLease != "" {
		if ns, name, ok := o.Lease(); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, field.Invalid(field.NewPath("--leader-lease"), o.LeaderLease, "must be namespace/name"))
		}
	}
	if o.ExplainAddress != "" {
		if host, port, err := net.SplitHostPort(o.ExplainAddress); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("--explain-address"), o.ExplainAddress, "want host:port"))
		} else if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			errs = append(errs, field.Invalid(field.NewPath("--explain-address"), o.ExplainAddress,
				"must be a loopback address (127.0.0.1 or ::1): the endpoint is reached through the API server's port-forward only"))
		} else if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
			errs = append(errs, field.Invalid(field.NewPath("--explain-address"), o.ExplainAddress, "the port must be a number from 1 to 65535"))
		}
	}
	if o.StaleAfter <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("--load-watcher-stale-after"), o.StaleAfter.String(), "must be positive"))
	}
	if err := errs.ToAggregate(); err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}
	return nil
}
