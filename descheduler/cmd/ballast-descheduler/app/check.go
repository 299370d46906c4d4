package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	componentbaseconfig "k8s.io/component-base/config"
	componentbasevalidation "k8s.io/component-base/config/validation"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

// unreachable is the API server the check's policy decoding is given; it
// is dialled only for a DefaultEvictor priorityThreshold by class name.
const unreachable = "https://kubernetes.invalid"

// checkRegistry fills the process's plugin registry for checks.
var checkRegistry sync.Once

// Check runs what ballast-descheduler does with c's arguments and files
// before its first cycle: the descheduler's and Ballast's flag parsing and
// checks, the decoding, validation and defaulting of --policy-config-file
// with every upstream plugin and Ballast's, and the reading of
// --scheduler-config. It starts no server and evicts nothing. When c runs
// long (a Deployment), a --descheduling-interval of 0, which runs one cycle
// and exits, is refused too: the workload would restart it in a loop.
func Check(ctx context.Context, c startup.Container) error {
	return c.WithFiles(func(root *startup.Root) error { return check(ctx, c, root) })
}

func check(ctx context.Context, c startup.Container, root *startup.Root) error {
	cmd, o := newCommand(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.ParseFlags(c.Args); err != nil {
		return err
	}
	if args := cmd.Flags().Args(); len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", component, args)
	}
	flags := cmd.Flags()
	interval, err := flags.GetDuration("descheduling-interval")
	if err != nil {
		return err
	}
	leaderElect, err := flags.GetBool("leader-elect")
	if err != nil {
		return err
	}
	var errs []error
	switch {
	case interval < 0:
		errs = append(errs, fmt.Errorf("--descheduling-interval=%v: must not be negative", interval))
	case interval == 0 && leaderElect:
		// What the descheduler refuses when it starts.
		errs = append(errs, errors.New("--descheduling-interval=0s: leader election (--leader-elect) needs a descheduling interval"))
	case interval == 0 && c.LongRunning:
		errs = append(errs, fmt.Errorf("--descheduling-interval=0s runs one cycle and exits, and %s restarts it: must be positive", c.Workload))
	}
	if leaderElect {
		errs = append(errs, checkLeaderElection(flags)...)
	}
	caFile := ""
	if root.Has(o.loadWatcherCAFile) {
		caFile = root.Path(o.loadWatcherCAFile)
	}
	if _, err := newUsageSource(o, caFile); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseMovesConfigMap(o.movesConfigMap); err != nil {
		errs = append(errs, err)
	}
	schedulerConfig := ""
	if o.schedulerConfig != "" {
		schedulerConfig = root.Path(o.schedulerConfig)
	}
	if _, err := newSchedulerModel(klog.FromContext(ctx), schedulerConfig, o.schedulerProfile); err != nil {
		errs = append(errs, err)
	}
	if policy, _ := flags.GetString("policy-config-file"); policy != "" {
		if err := checkPolicy(root.Path(policy)); err != nil {
			errs = append(errs, fmt.Errorf("--policy-config-file %s: %w", policy, err))
		}
	}
	return errors.Join(errs...)
}

// checkPolicy decodes, validates and defaults the policy in file as the
// descheduler does at start, with every upstream plugin and Ballast's.
func checkPolicy(file string) error {
	_, err := loadPolicy(file)
	return err
}

// loadPolicy reads the policy in file as the descheduler does at start.
func loadPolicy(file string) (*api.DeschedulerPolicy, error) {
	// The policy's decoding finds each plugin's args type in the process's
	// registry, as at the descheduler's start; a check fills it once, with
	// plugins that are never built.
	checkRegistry.Do(func() {
		descheduler.SetupPlugins()
		RegisterPlugins(pluginregistry.PluginRegistry, nil, nil, nil)
	})
	client, err := kubernetes.NewForConfig(&rest.Config{Host: unreachable, Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	return descheduler.LoadPolicyConfig(file, client, pluginregistry.PluginRegistry)
}

// BalanceArgs returns the LoadAwareBalance args of policy (a
// DeschedulerPolicy), decoded, validated and defaulted as the descheduler
// does at start; nil when no profile runs LoadAwareBalance.
func BalanceArgs(policy []byte) (*loadawarebalance.LoadAwareBalanceArgs, error) {
	const path = "/policy.yaml"
	var args *loadawarebalance.LoadAwareBalanceArgs
	err := startup.Container{Files: map[string][]byte{path: policy}}.WithFiles(func(root *startup.Root) error {
		p, err := loadPolicy(root.Path(path))
		if err != nil {
			return err
		}
		for _, prof := range p.Profiles {
			for _, pc := range prof.PluginConfigs {
				if a, ok := pc.Args.(*loadawarebalance.LoadAwareBalanceArgs); ok && pc.Name == loadawarebalance.PluginName {
					args = a
					return nil
				}
			}
		}
		return nil
	})
	return args, err
}

// checkLeaderElection checks the --leader-elect-* flags as the leader
// elector does when the descheduler starts it.
func checkLeaderElection(flags *pflag.FlagSet) []error {
	cfg := componentbaseconfig.LeaderElectionConfiguration{LeaderElect: true}
	var errs []error
	durations := map[string]*metav1.Duration{
		"leader-elect-lease-duration": &cfg.LeaseDuration,
		"leader-elect-renew-deadline": &cfg.RenewDeadline,
		"leader-elect-retry-period":   &cfg.RetryPeriod,
	}
	for name, d := range durations {
		v, err := flags.GetDuration(name)
		if err != nil {
			errs = append(errs, err)
		}
		d.Duration = v
	}
	strs := map[string]*string{
		"leader-elect-resource-lock":      &cfg.ResourceLock,
		"leader-elect-resource-name":      &cfg.ResourceName,
		"leader-elect-resource-namespace": &cfg.ResourceNamespace,
	}
	for name, s := range strs {
		v, err := flags.GetString(name)
		if err != nil {
			errs = append(errs, err)
		}
		*s = v
	}
	path := field.NewPath("leaderElection")
	invalid := componentbasevalidation.ValidateLeaderElectionConfiguration(&cfg, path)
	if len(invalid) == 0 {
		if e := startup.CheckLeaderElector(path, cfg.RenewDeadline.Duration, cfg.RetryPeriod.Duration); e != nil {
			invalid = append(invalid, e)
		}
	}
	for _, e := range invalid {
		errs = append(errs, e)
	}
	return errs
}
