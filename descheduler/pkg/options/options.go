// Package options holds the flags ballast-descheduler adds to the upstream
// descheduler's: how to reach load-watcher, where the moves are kept, which
// scheduler configuration to predict. The command binds them; the start-up
// check parses and validates them as the command does.
package options

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ballast-sched/ballast/core/client"
)

// Defaults.
const (
	DefaultLoadWatcherAddress = "http://ballast-load-watcher:2020"
	DefaultSchedulerProfile   = "ballast-scheduler"
)

// Options are Ballast's flags of the descheduler.
type Options struct {
	// LoadWatcherAddress is the base URL of load-watcher.
	LoadWatcherAddress string
	// LoadWatcherCAFile is a PEM CA bundle that signed an https
	// load-watcher's certificate.
	LoadWatcherCAFile string
	// LoadWatcherStaleAfter is how old a node's newest sample may be
	// before the node is neither hot nor a destination.
	LoadWatcherStaleAfter time.Duration
	// MovesConfigMap is NAMESPACE/NAME of the ConfigMap the moves are kept
	// in; empty keeps them in the process only.
	MovesConfigMap string
	// SchedulerConfig is the KubeSchedulerConfiguration file the Ballast
	// scheduler runs with; SchedulerProfile its profile whose settings are
	// predicted.
	SchedulerConfig, SchedulerProfile string
	// Version prints the version and exits.
	Version bool
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{LoadWatcherAddress: DefaultLoadWatcherAddress, LoadWatcherStaleAfter: client.DefaultStaleAfter,
		SchedulerProfile: DefaultSchedulerProfile}
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.LoadWatcherAddress, "load-watcher-address", o.LoadWatcherAddress,
		"Base URL of the load-watcher that reports real node usage.")
	fs.StringVar(&o.LoadWatcherCAFile, "load-watcher-ca-file", o.LoadWatcherCAFile,
		"PEM CA bundle that signed the certificate of an https --load-watcher-address; empty means the system roots.")
	fs.DurationVar(&o.LoadWatcherStaleAfter, "load-watcher-stale-after", o.LoadWatcherStaleAfter,
		"Usage older than this is stale: the node is neither hot nor a destination.")
	fs.StringVar(&o.MovesConfigMap, "moves-configmap", o.MovesConfigMap,
		"NAMESPACE/NAME of a ConfigMap the descheduler keeps its recent moves in, so that a restart or a new leader undoes none of them; "+
			"it must exist. Empty keeps them in the process only.")
	fs.StringVar(&o.SchedulerConfig, "scheduler-config", o.SchedulerConfig,
		"The KubeSchedulerConfiguration file the Ballast scheduler runs with (its ConfigMap, mounted): the descheduler predicts where "+
			"a moved pod lands with that profile's LoadAware settings, and reads the file again when it changes. Empty, or a file "+
			"that is not there, predicts LoadAware's defaults.")
	fs.StringVar(&o.SchedulerProfile, "scheduler-profile", o.SchedulerProfile,
		"The profile of --scheduler-config whose LoadAware settings the descheduler predicts (the schedulerName of the pods it moves).")
	fs.BoolVar(&o.Version, "version", o.Version, "Print the version and exit.")
}

// ConfigMapRef names a ConfigMap.
type ConfigMapRef struct{ Namespace, Name string }

// Moves reads --moves-configmap: nil when empty.
func (o *Options) Moves() (*ConfigMapRef, error) {
	v := o.MovesConfigMap
	if v == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(v, "/")
	if !ok {
		return nil, fmt.Errorf("--moves-configmap %q: want NAMESPACE/NAME", v)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fmt.Errorf("--moves-configmap %q: namespace: %s", v, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("--moves-configmap %q: name: %s", v, strings.Join(errs, "; "))
	}
	return &ConfigMapRef{Namespace: ns, Name: name}, nil
}

// UsageClient is the load-watcher client of the flags, reading the CA bundle
// from caFile (the file --load-watcher-ca-file names, or where a check wrote
// it; empty skips reading it).
func (o *Options) UsageClient(caFile string) (*client.Client, error) {
	c, err := client.New(client.Config{Address: o.LoadWatcherAddress, CAFile: caFile, StaleAfter: o.LoadWatcherStaleAfter})
	if err != nil {
		return nil, fmt.Errorf("--load-watcher-address %q / --load-watcher-ca-file %q / --load-watcher-stale-after %v: %w",
			o.LoadWatcherAddress, o.LoadWatcherCAFile, o.LoadWatcherStaleAfter, err)
	}
	return c, nil
}
