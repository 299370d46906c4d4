package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// unreachable is the API server the check's plugins are given: they are
// built but never started, so nothing dials it.
const unreachable = "https://kubernetes.invalid"

// Check runs what ballast-scheduler does with c's arguments and files
// before it first talks to the API server: kube-scheduler's flag parsing
// and validation, Ballast's flag validation, the decoding, defaulting and
// validation of --config with Ballast's plugin args, and the building of
// every profile's plugins (whose factories check their args). It starts no
// server and reaches no cluster. An error names the flag or the
// configuration's field as the scheduler would at start.
func Check(ctx context.Context, c startup.Container) error {
	return c.WithFiles(func(root *startup.Root) error { return check(ctx, c, root) })
}

func check(ctx context.Context, c startup.Container, root *startup.Root) error {
	opts, ballast, err := parseFlags(c.Args)
	if err != nil {
		return err
	}
	// As kube-scheduler's Setup: validate the flags on the default
	// configuration, then read the file.
	if opts.ComponentConfig, err = latest.Default(); err != nil {
		return err
	}
	if errs := opts.Validate(); len(errs) > 0 {
		return fmt.Errorf("invalid flags: %w", utilerrors.NewAggregate(errs))
	}
	if err := ballast.Validate(); err != nil {
		return err
	}
	cfg := opts.ComponentConfig
	if opts.ConfigFile != "" {
		if cfg, err = options.LoadConfigFromFile(klog.FromContext(ctx), root.Path(opts.ConfigFile)); err != nil {
			return err
		}
		if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
			return fmt.Errorf("%s: %w", opts.ConfigFile, err)
		}
	}
	if le := cfg.LeaderElection; le.LeaderElect {
		if err := startup.CheckLeaderElector(field.NewPath("leaderElection"), le.RenewDeadline.Duration, le.RetryPeriod.Duration); err != nil {
			return fmt.Errorf("%s: %w", orDefaultConfig(opts.ConfigFile), err)
		}
	}
	if ns, name, ok := ballast.leaderLease(); ok {
		if le := cfg.LeaderElection; !le.LeaderElect || ns != le.ResourceNamespace || name != le.ResourceName {
			return fmt.Errorf("--leader-lease %s is not the lease leader election holds in %s (leaderElect %t, %s/%s)",
				ballast.LeaderLease, orDefaultConfig(opts.ConfigFile), le.LeaderElect, le.ResourceNamespace, le.ResourceName)
		}
	}
	// Build the scheduler, as it would at start, on a client that is never
	// used: profiles, their plugins and the plugins' args.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	restCfg := &rest.Config{Host: unreachable}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	noUsage := func(context.Context, fwk.Handle) (nodeload.Source, error) { return nil, nil }
	registry, err := registryOf(noUsage, nil)
	if err != nil {
		return err
	}
	_, err = newScheduler(ctx, client, restCfg, cfg, registry, informers.NewSharedInformerFactory(client, 0))
	if err != nil {
		return fmt.Errorf("building the scheduler from %s: %w", orDefaultConfig(opts.ConfigFile), err)
	}
	return nil
}

func orDefaultConfig(file string) string {
	if file == "" {
		return "the default configuration"
	}
	return file
}

// parseFlags parses args as ballast-scheduler's command does, into options
// of its own: kube-scheduler's options on a registry of feature gates of
// their own, and Ballast's. The command's other flags (logging, version)
// are bound to process-wide state, so their values are only checked
// against their type.
func parseFlags(args []string) (*options.Options, *Options, error) {
	gates := basecompatibility.NewComponentGlobalsRegistry()
	if err := gates.Register(basecompatibility.DefaultKubeComponent,
		compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		return nil, nil, err
	}
	opts := options.NewOptionsWithComponentGlobalsRegistry(gates)
	ballast := NewOptions()
	fs := pflag.NewFlagSet("ballast-scheduler", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	ballast.AddFlags(fs)
	startup.AddStandIns(fs, NewCommand().Flags())
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	// As the command's PersistentPreRunE: the feature gates of the flags.
	if err := gates.Set(); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("ballast-scheduler takes no arguments, got %q", fs.Args())
	}
	return opts, ballast, nil
}

// registryOf is the registry of Ballast's plugins on source, their metrics
// unregistered: for a scheduler built to check or explain, not to run.
func registryOf(source SourceFactory, now func() time.Time) (frameworkruntime.Registry, error) {
	registry := frameworkruntime.Registry{}
	for _, add := range plugins(source, now, nil) {
		if err := add(registry); err != nil {
			return nil, err
		}
	}
	return registry, nil
}

// newScheduler builds kube-scheduler as the scheduler's start does, with
// cfg's profiles and Ballast's plugins from registry, on client and the
// informers of factory, without running it.
func newScheduler(ctx context.Context, client kubernetes.Interface, restCfg *rest.Config, cfg *schedconfig.KubeSchedulerConfiguration,
	registry frameworkruntime.Registry, factory informers.SharedInformerFactory) (*scheduler.Scheduler, error) {
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	context.AfterFunc(ctx, broadcaster.Shutdown)
	return scheduler.New(ctx, client, factory, nil,
		profile.NewRecorderFactory(broadcaster),
		scheduler.WithKubeConfig(restCfg),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
}
