// Package check runs what ballast-scheduler does with a container's
// arguments and files before it first talks to the API server, without
// starting anything: the parsing of its flags, the validation of Ballast's
// own, the decoding, defaulting and validation of --config with Ballast's
// plugin args, and the building of every profile's plugins (whose factories
// check their args). An error names the flag or the configuration's field as
// the scheduler would at start. `ballast render` and `ballast install` run it
// on the chart they render.
//
// kube-scheduler's own flags are known by name and type from the command
// (upstreamflags.go, kept equal to it by the command's tests); their values
// are checked where the scheduler would refuse them at start and the check
// can tell without its option packages: feature gates, the serving port and
// address. The check does not link kube-scheduler's command.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/options"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"
)

// unreachable is the API server the check's plugins are given: they are
// built but never started, so nothing dials it.
const unreachable = "https://kubernetes.invalid"

// Check runs what ballast-scheduler does with c's arguments and files before
// it first talks to the API server. It starts no server and reaches no
// cluster.
func Check(ctx context.Context, c startup.Container) error {
	return c.WithFiles(func(root *startup.Root) error { return check(ctx, root, c.Args) })
}

func check(ctx context.Context, root *startup.Root, args []string) error {
	fs, o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if err := checkUpstreamFlags(fs); err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}
	file := fs.Lookup("config").Value.String()
	cfg, err := configuration(root, file)
	if err != nil {
		return err
	}
	if le := cfg.LeaderElection; le.LeaderElect {
		if err := startup.CheckLeaderElector(field.NewPath("leaderElection"), le.RenewDeadline.Duration, le.RetryPeriod.Duration); err != nil {
			return fmt.Errorf("%s: %w", orDefaultConfig(file), err)
		}
	}
	if ns, name, ok := o.Lease(); ok {
		if le := cfg.LeaderElection; !le.LeaderElect || ns != le.ResourceNamespace || name != le.ResourceName {
			return fmt.Errorf("--leader-lease %s is not the lease leader election holds in %s (leaderElect %t, %s/%s)",
				o.LeaderLease, orDefaultConfig(file), le.LeaderElect, le.ResourceNamespace, le.ResourceName)
		}
	}
	// Build each profile's plugins, as the scheduler does at start, on a
	// client that is never used.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	restCfg := &rest.Config{Host: unreachable}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	noUsage := func(context.Context, fwk.Handle) (nodeload.Source, error) { return nil, nil }
	registry := plugins.NewRegistry(noUsage, plugins.Options{})
	factory := informers.NewSharedInformerFactory(client, 0)
	for i := range cfg.Profiles {
		if _, err := plugins.NewFramework(ctx, registry, &cfg.Profiles[i], frameworkruntime.WithClientSet(client),
			frameworkruntime.WithKubeConfig(restCfg), frameworkruntime.WithInformerFactory(factory),
			frameworkruntime.WithSnapshotSharedLister(internalcache.NewEmptySnapshot()),
			frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister()))); err != nil {
			return fmt.Errorf("building the scheduler from %s: %w", orDefaultConfig(file), err)
		}
	}
	return nil
}

// configuration is what the scheduler runs with: --config, decoded, defaulted
// and validated, or kube-scheduler's default configuration without one.
func configuration(root *startup.Root, file string) (*schedconfig.KubeSchedulerConfiguration, error) {
	if file == "" {
		return latest.Default()
	}
	data, err := os.ReadFile(root.Path(file))
	if err != nil {
		return nil, err
	}
	cfg, err := plugins.DecodeConfiguration(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return cfg, nil
}

func orDefaultConfig(file string) string {
	if file == "" {
		return "the default configuration"
	}
	return file
}

// parseFlags parses args as ballast-scheduler's command does: Ballast's
// flags into options, kube-scheduler's (and the command's logging and version
// flags) into stand-ins that keep their text and check their type.
func parseFlags(args []string) (*pflag.FlagSet, *options.Options, error) {
	o := options.NewOptions()
	fs := pflag.NewFlagSet("ballast-scheduler", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	startup.AddStandIns(fs, UpstreamFlags)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("ballast-scheduler takes no arguments, got %q", fs.Args())
	}
	return fs, o, nil
}

// checkUpstreamFlags refuses values of kube-scheduler's flags that it refuses
// at start: unknown or misspelt feature gates, a serving port out of range,
// a bind address that is no IP.
func checkUpstreamFlags(fs *pflag.FlagSet) error {
	var errs []error
	if f := fs.Lookup("feature-gates"); f.Changed {
		gates := utilfeature.DefaultMutableFeatureGate.DeepCopy()
		if err := gates.Set(f.Value.String()); err != nil {
			errs = append(errs, fmt.Errorf("--feature-gates: %w", err))
		}
	}
	if f := fs.Lookup("secure-port"); f.Changed {
		if p, err := strconv.Atoi(f.Value.String()); err != nil || p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("--secure-port %s: must be between 0 and 65535, inclusive", f.Value))
		}
	}
	if f := fs.Lookup("bind-address"); f.Changed && net.ParseIP(f.Value.String()) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q: must be an IP address", f.Value))
	}
	return errors.Join(errs...)
}
