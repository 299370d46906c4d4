// Package app builds the ballast-descheduler command: the upstream
// descheduler command, every upstream plugin, and Ballast's plugins.
package app

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
	deschedulerapp "sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/descheduler/pkg/options"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins"
	"github.com/ballast-sched/ballast/descheduler/pkg/schedulerconfig"
)

// component names the binary, its events and its version line.
const component = "ballast-descheduler"

// Main runs the command and returns the process exit code.
func Main() int {
	return cli.Run(NewCommand(os.Stdout))
}

// NewCommand returns the upstream descheduler command with Ballast's flags,
// a version subcommand and Ballast's plugins registered.
func NewCommand(out io.Writer) *cobra.Command {
	cmd := deschedulerapp.NewDeschedulerCommand(out)
	cmd.Use = component
	cmd.Short = component
	cmd.Long = "ballast-descheduler evicts pods from nodes where they no longer belong: hot by real usage, " +
		"unbalanced after a node joins, or any upstream descheduler policy."
	o := options.NewOptions()
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return printVersion(c) },
	})

	// The upstream PreRunE replaces the global plugin registry
	// (descheduler.SetupPlugins), so Ballast's plugins go in after it.
	upstreamPreRunE := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if o.Version {
			return nil
		}
		if upstreamPreRunE != nil {
			if err := upstreamPreRunE(c, args); err != nil {
				return err
			}
		}
		usage, err := o.UsageClient(o.LoadWatcherCAFile)
		if err != nil {
			return err
		}
		moves, err := o.Moves()
		if err != nil {
			return err
		}
		if dryRun, _ := c.Flags().GetBool("dry-run"); dryRun && moves != nil {
			// A dry run's evictions go to a sandbox: what it would move
			// must not guard the real cluster.
			klog.Background().Info("--dry-run: the moves are not kept in --moves-configmap", "configMap", o.MovesConfigMap)
			moves = nil
		}
		model, err := schedulerconfig.New(klog.Background(), o.SchedulerConfig, o.SchedulerProfile)
		if err != nil {
			return err
		}
		plugins.Register(pluginregistry.PluginRegistry, processDeps(&lazyClient{client: usage}, model, moves, o.SchedulerConfig, o.SchedulerProfile))
		return nil
	}
	upstreamRunE := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.Version {
			return printVersion(c)
		}
		return upstreamRunE(c, args)
	}
	return cmd
}

// printVersion prints Ballast's version; upstream's version command would
// print the descheduler's, which its own release build sets.
func printVersion(c *cobra.Command) error {
	_, err := fmt.Fprintln(c.OutOrStdout(), version.Line(component))
	return err
}
