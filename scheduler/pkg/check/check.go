// Package check runs what ballast-scheduler does with a container's
// arguments and files before it first talks to the API server, without
// starting anything: the parsing of its flags, the validation of Ballast's
// own, the decoding, defaulting and validation of --config with Ballast's
// plugin args, and the building of every profile's plugins (whose factories
// check their args). An error names the flag or the configuration's field as
// the scheduler would at start. `ballast render` and `ballast install` run it
// on the chart they render.
//
// It builds no plugin: what the framework refuses when it builds a profile's
// plugins is checked from what each plugin implements (pluginpoints.go, kept
// equal to the plugins by the plugins package's tests), so the check links
// neither kube-scheduler's plugins nor Ballast's, which the `ballast` CLI
// must not carry.
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
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/options"
)

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
	// What building each profile's plugins refuses, as the scheduler
	// does at start: the plugins and their extension points, Ballast's
	// plugins' args (kube-scheduler's own are validated with the
	// configuration).
	for i := range cfg.Profiles {
		profile := &cfg.Profiles[i]
		if err := Profile(profile); err != nil {
			return fmt.Errorf("%s: profile %q: %w", orDefaultConfig(file), profile.SchedulerName, err)
		}
		if err := checkBallastArgs(field.NewPath("profiles").Index(i), profile); err != nil {
			return fmt.Errorf("%s: %w", orDefaultConfig(file), err)
		}
	}
	return nil
}

// checkBallastArgs validates the args of Ballast's plugins in profile, as
// their constructors do once the scheme has defaulted them.
func checkBallastArgs(path *field.Path, profile *schedconfig.KubeSchedulerProfile) error {
	var errs []error
	for i, pc := range profile.PluginConfig {
		args := path.Child("pluginConfig").Index(i).Child("args")
		var err error
		switch a := pc.Args.(type) {
		case *config.LoadAwareArgs:
			err = config.ValidateLoadAwareArgs(args, a)
		case *config.LoadVariationRiskBalancingArgs:
			err = config.ValidateLoadVariationRiskBalancingArgs(args, a)
		case *config.UsageAwareFitArgs:
			err = config.ValidateUsageAwareFitArgs(args, a)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid %s args: %w", pc.Name, err))
		}
	}
	return errors.Join(errs...)
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
	cfg, err := config.DecodeSchedulerConfiguration(data)
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
