// Package app builds the ballast-descheduler command: the upstream
// descheduler command, every upstream plugin, and Ballast's plugins.
package app

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	deschedulerapp "sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/version"
)

// Main runs the command and returns the process exit code.
func Main() int {
	return cli.Run(NewCommand(os.Stdout))
}

// options are the flags ballast-descheduler adds to the upstream ones.
type options struct {
	loadWatcherAddress    string
	loadWatcherCAFile     string
	loadWatcherStaleAfter time.Duration
	version               bool
}

// NewCommand returns the upstream descheduler command with
// --load-watcher-address, --version, a version subcommand and Ballast's
// plugins registered.
func NewCommand(out io.Writer) *cobra.Command {
	cmd := deschedulerapp.NewDeschedulerCommand(out)
	cmd.Use = "ballast-descheduler"
	cmd.Short = "ballast-descheduler"
	cmd.Long = "ballast-descheduler evicts pods from nodes where they no longer belong: hot by real usage, " +
		"unbalanced after a node joins, or any upstream descheduler policy."
	o := &options{}
	cmd.Flags().StringVar(&o.loadWatcherAddress, "load-watcher-address", "http://ballast-load-watcher:2020",
		"Base URL of the load-watcher that reports real node usage.")
	cmd.Flags().StringVar(&o.loadWatcherCAFile, "load-watcher-ca-file", "",
		"PEM CA bundle that signed the certificate of an https --load-watcher-address; empty means the system roots.")
	cmd.Flags().DurationVar(&o.loadWatcherStaleAfter, "load-watcher-stale-after", client.DefaultStaleAfter,
		"Usage older than this is stale: the node is neither hot nor a destination.")
	cmd.Flags().BoolVar(&o.version, "version", false, "Print the version and exit.")
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
		if o.version {
			return nil
		}
		if upstreamPreRunE != nil {
			if err := upstreamPreRunE(c, args); err != nil {
				return err
			}
		}
		src, err := newUsageSource(o)
		if err != nil {
			return err
		}
		RegisterPlugins(pluginregistry.PluginRegistry, src)
		return nil
	}
	upstreamRunE := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.version {
			return printVersion(c)
		}
		return upstreamRunE(c, args)
	}
	return cmd
}

// printVersion prints Ballast's version; upstream's version command would
// print the descheduler's, which its own release build sets.
func printVersion(c *cobra.Command) error {
	_, err := fmt.Fprintln(c.OutOrStdout(), version.Line("ballast-descheduler"))
	return err
}

func newUsageSource(o *options) (*lazyClient, error) {
	c, err := client.New(client.Config{Address: o.loadWatcherAddress, CAFile: o.loadWatcherCAFile, StaleAfter: o.loadWatcherStaleAfter})
	if err != nil {
		return nil, fmt.Errorf("--load-watcher-address %q / --load-watcher-ca-file %q / --load-watcher-stale-after %v: %w",
			o.loadWatcherAddress, o.loadWatcherCAFile, o.loadWatcherStaleAfter, err)
	}
	return &lazyClient{client: c}, nil
}
