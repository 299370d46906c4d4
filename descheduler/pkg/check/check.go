// Package check runs what ballast-descheduler does with a container's
// arguments and files before its first cycle, without starting anything:
// the parsing of its flags, the descheduler's and Ballast's checks of them,
// the decoding, validation and defaulting of --policy-config-file with every
// upstream plugin and Ballast's, and the reading of --scheduler-config. An
// error names the flag or the policy's field. `ballast render` and `ballast
// install` run it on the chart they render.
//
// The upstream descheduler's flags are known by name, type and default from
// the command (upstreamflags.go, kept equal to it by the command's tests);
// the check does not link the descheduler's command.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	componentbaseconfig "k8s.io/component-base/config"
	componentbasevalidation "k8s.io/component-base/config/validation"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/descheduler/pkg/options"
	"github.com/ballast-sched/ballast/descheduler/pkg/policy"
	"github.com/ballast-sched/ballast/descheduler/pkg/schedulerconfig"
)

// component names the binary in messages.
const component = "ballast-descheduler"

// Check runs what ballast-descheduler does with c's arguments and files
// before its first cycle. It starts no server and evicts nothing. When c runs
// long (a Deployment), a --descheduling-interval of 0, which runs one cycle
// and exits, is refused too: the workload would restart it in a loop.
func Check(ctx context.Context, c startup.Container) error {
	return c.WithFiles(func(root *startup.Root) error { return check(ctx, c, root) })
}

func check(ctx context.Context, c startup.Container, root *startup.Root) error {
	o := options.NewOptions()
	flags := pflag.NewFlagSet(component, pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	o.AddFlags(flags)
	startup.AddStandIns(flags, UpstreamFlags)
	if err := flags.Parse(c.Args); err != nil {
		return err
	}
	if args := flags.Args(); len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", component, args)
	}
	interval, err := flags.GetDuration("descheduling-interval")
	if err != nil {
		return fmt.Errorf("--descheduling-interval: %w", err)
	}
	leaderElect, err := flags.GetBool("leader-elect")
	if err != nil {
		return fmt.Errorf("--leader-elect: %w", err)
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
	if root.Has(o.LoadWatcherCAFile) {
		caFile = root.Path(o.LoadWatcherCAFile)
	}
	if _, err := o.UsageClient(caFile); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.Moves(); err != nil {
		errs = append(errs, err)
	}
	schedulerConfig := ""
	if o.SchedulerConfig != "" {
		schedulerConfig = root.Path(o.SchedulerConfig)
	}
	if _, err := schedulerconfig.New(klog.FromContext(ctx), schedulerConfig, o.SchedulerProfile); err != nil {
		errs = append(errs, err)
	}
	if file, _ := flags.GetString("policy-config-file"); file != "" {
		data, err := os.ReadFile(root.Path(file))
		if err == nil {
			_, err = policy.Load(data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--policy-config-file %s: %w", file, err))
		}
	}
	return errors.Join(errs...)
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
			errs = append(errs, fmt.Errorf("--%s: %w", name, err))
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
			errs = append(errs, fmt.Errorf("--%s: %w", name, err))
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
