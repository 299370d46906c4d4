// Package app builds the ballast-scheduler command: kube-scheduler's own
// command with Ballast's plugins registered and Ballast's flags added.
package app

import (
	"context"
	"fmt"

	"github.com/ballast-sched/ballast/scheduler/pkg/explain"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/version/verflag"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/apiconnect"
	"github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/scheduler/pkg/leaderrelease"
	"github.com/ballast-sched/ballast/scheduler/pkg/options"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"
)

// NewCommand returns the ballast-scheduler command. Usage comes from the
// source the --load-watcher-* flags describe.
func NewCommand() *cobra.Command {
	o := options.NewOptions()
	set := plugins.New(plugins.FlagSource(o), plugins.Options{Registerer: legacyregistry.Registerer()})
	var cmd *cobra.Command
	configFile := func() string { return cmd.Flags().Lookup("config").Value.String() }
	cmd = schedapp.NewSchedulerCommand(withPlugins(set.Registry), releaseCrashedLeader(o), serveExplanations(o, configFile, set.Usage))
	cmd.Use = "ballast-scheduler"
	cmd.Long = "ballast-scheduler is kube-scheduler with Ballast's load-aware plugins " +
		"(LoadAware, LoadVariationRiskBalancing, PodCountBalance, UsageAwareFit), " +
		"reading real node usage from load-watcher."
	o.AddFlags(cmd.Flags())
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if versionRequested(c) {
			_, err := fmt.Fprintln(c.OutOrStdout(), version.Line(c.Name()))
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		if o.WaitForAPIServer {
			// Before kube-scheduler builds its clients: they read HTTPS_PROXY.
			if _, err := apiconnect.Start(context.Background(), o.APIServerCache); err != nil {
				return err
			}
		}
		return run(c, args)
	}
	return cmd
}

// withPlugins adds the plugins of registry to kube-scheduler's.
func withPlugins(registry frameworkruntime.Registry) schedapp.Option {
	return func(r frameworkruntime.Registry) error { return r.Merge(registry) }
}

// releaseCrashedLeader has the first of Ballast's plugins to be built start
// the releaser of --leader-lease (leaderrelease.OnFirstPlugin). The option
// runs when the scheduler is set up, once the flags are parsed; without
// --leader-lease it changes nothing.
func releaseCrashedLeader(o *options.Options) schedapp.Option {
	return func(r frameworkruntime.Registry) error {
		if namespace, name, ok := o.Lease(); ok {
			leaderrelease.OnFirstPlugin(r, namespace, name)
		}
		return nil
	}
}

// serveExplanations has the first of Ballast's plugins to be built start
// the explain endpoint on --explain-address, explaining with the
// configuration of --config and the plugins' usage. Without either it
// changes nothing.
func serveExplanations(o *options.Options, configFile func() string, usage nodeload.Source) schedapp.Option {
	return func(r frameworkruntime.Registry) error {
		if o.ExplainAddress != "" && configFile() != "" {
			explain.ServeOnFirstPlugin(r, o.ExplainAddress, configFile(), usage)
		}
		return nil
	}
}

// versionRequested reports a plain --version. Upstream's handler would print
// only the Kubernetes version and exit; --version=raw (Kubernetes's build
// details) and --version=vX.Y.Z (emulated version) still go to it.
func versionRequested(c *cobra.Command) bool {
	f := c.Flags().Lookup("version")
	return f != nil && f.Value.String() == string(verflag.VersionTrue)
}

// Main runs the command and returns the process's exit code.
func Main() int {
	return cli.Run(NewCommand())
}
