package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// configure completes the parsed flags fs of o from the environment
// (lookup) and checks them: it returns the collector's configuration, less
// its usage source. Run and Check both go through it.
func (o *options) configure(fs *pflag.FlagSet, lookup func(string) (string, bool)) (collector.Config, error) {
	if err := applyEnv(fs, lookup); err != nil {
		return collector.Config{}, err
	}
	if err := o.validate(); err != nil {
		return collector.Config{}, fmt.Errorf("invalid flags: %w", err)
	}
	windows, err := o.parseWindows()
	if err != nil {
		return collector.Config{}, fmt.Errorf("invalid flags: %w", err)
	}
	cfg := collector.Config{Period: o.period, Windows: windows, StaleAfter: o.staleAfter}
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

// Check runs what load-watcher does with c's arguments and environment
// before it reaches its usage source: flag parsing (the LOAD_WATCHER_*
// variables included) and every check of the flags and of the collector's
// configuration. It listens on nothing and reaches no cluster.
func Check(_ context.Context, c startup.Container) error {
	o := defaultOptions()
	fs := pflag.NewFlagSet("load-watcher", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.addFlags(fs)
	startup.AddStandIns(fs, startup.FlagsOf(newFlagSet(defaultOptions())))
	if err := fs.Parse(c.Args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("load-watcher takes no arguments, got %q", fs.Args())
	}
	if o.version {
		return fmt.Errorf("--version prints the version and exits, and %s restarts it", c.Workload)
	}
	_, err := o.configure(fs, c.LookupEnv)
	return err
}
