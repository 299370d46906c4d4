// Package check runs what load-watcher does with a container's arguments and
// environment before it reaches its usage source: flag parsing (the
// LOAD_WATCHER_* variables included) and every check of the flags and of the
// collector's configuration. `ballast render` and `ballast install` run it on
// the chart they render.
package check

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/load-watcher/pkg/options"
)

// Check runs what load-watcher does with c's arguments and environment
// before it reaches its usage source: flag parsing (the LOAD_WATCHER_*
// variables included) and every check of the flags and of the collector's
// configuration. It listens on nothing and reaches no cluster.
func Check(_ context.Context, c startup.Container) error {
	o := options.Default()
	fs := pflag.NewFlagSet("load-watcher", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	startup.AddStandIns(fs, startup.FlagsOf(options.NewFlagSet(options.Default())))
	if err := fs.Parse(c.Args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("load-watcher takes no arguments, got %q", fs.Args())
	}
	if o.Version {
		return fmt.Errorf("--version prints the version and exits, and %s restarts it", c.Workload)
	}
	_, err := o.Configure(fs, c.LookupEnv)
	return err
}
