// Package app builds the ballast-descheduler command: the upstream
// descheduler command, every upstream plugin, and Ballast's plugins.
package app

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
	deschedulerapp "sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/version"
)

// component names the binary, its events and its version line.
const component = "ballast-descheduler"

// Main runs the command and returns the process exit code.
func Main() int {
	return cli.Run(NewCommand(os.Stdout))
}

// options are the flags ballast-descheduler adds to the upstream ones.
type options struct {
	loadWatcherAddress    string
	loadWatcherCAFile     string
	loadWatcherStaleAfter time.Duration
	movesConfigMap        string
	schedulerConfig       string
	schedulerProfile      string
	version               bool
}

// NewCommand returns the upstream descheduler command with
// --load-watcher-address, --version, a version subcommand and Ballast's
// plugins registered.
func NewCommand(out io.Writer) *cobra.Command {
	cmd, _ := newCommand(out)
	return cmd
}

// newCommand returns the command and the options its Ballast flags set.
func newCommand(out io.Writer) (*cobra.Command, *options) {
	cmd := deschedulerapp.NewDeschedulerCommand(out)
	cmd.Use = component
	cmd.Short = component
	cmd.Long = "ballast-descheduler evicts pods from nodes where they no longer belong: hot by real usage, " +
		"unbalanced after a node joins, or any upstream descheduler policy."
	o := &options{}
	cmd.Flags().StringVar(&o.loadWatcherAddress, "load-watcher-address", "http://ballast-load-watcher:2020",
		"Base URL of the load-watcher that reports real node usage.")
	cmd.Flags().StringVar(&o.loadWatcherCAFile, "load-watcher-ca-file", "",
		"PEM CA bundle that signed the certificate of an https --load-watcher-address; empty means the system roots.")
	cmd.Flags().DurationVar(&o.loadWatcherStaleAfter, "load-watcher-stale-after", client.DefaultStaleAfter,
		"Usage older than this is stale: the node is neither hot nor a destination.")
	cmd.Flags().StringVar(&o.movesConfigMap, "moves-configmap", "",
		"NAMESPACE/NAME of a ConfigMap the descheduler keeps its recent moves in, so that a restart or a new leader undoes none of them; "+
			"it must exist. Empty keeps them in the process only.")
	cmd.Flags().StringVar(&o.schedulerConfig, "scheduler-config", "",
		"The KubeSchedulerConfiguration file the Ballast scheduler runs with (its ConfigMap, mounted): the descheduler predicts where "+
			"a moved pod lands with that profile's LoadAware settings, and reads the file again when it changes. Empty, or a file "+
			"that is not there, predicts LoadAware's defaults.")
	cmd.Flags().StringVar(&o.schedulerProfile, "scheduler-profile", "ballast-scheduler",
		"The profile of --scheduler-config whose LoadAware settings the descheduler predicts (the schedulerName of the pods it moves).")
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
		src, err := newUsageSource(o, o.loadWatcherCAFile)
		if err != nil {
			return err
		}
		moves, err := parseMovesConfigMap(o.movesConfigMap)
		if err != nil {
			return err
		}
		if dryRun, _ := c.Flags().GetBool("dry-run"); dryRun && moves != nil {
			// A dry run's evictions go to a sandbox: what it would move
			// must not guard the real cluster.
			klog.Background().Info("--dry-run: the moves are not kept in --moves-configmap", "configMap", o.movesConfigMap)
			moves = nil
		}
		model, err := newSchedulerModel(klog.Background(), o.schedulerConfig, o.schedulerProfile)
		if err != nil {
			return err
		}
		RegisterPlugins(pluginregistry.PluginRegistry, src, model, moves)
		return nil
	}
	upstreamRunE := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.version {
			return printVersion(c)
		}
		return upstreamRunE(c, args)
	}
	return cmd, o
}

// printVersion prints Ballast's version; upstream's version command would
// print the descheduler's, which its own release build sets.
func printVersion(c *cobra.Command) error {
	_, err := fmt.Fprintln(c.OutOrStdout(), version.Line(component))
	return err
}

// movesConfigMap names where the moves are kept.
type movesConfigMap struct{ namespace, name string }

// parseMovesConfigMap reads --moves-configmap: nil when empty.
func parseMovesConfigMap(v string) (*movesConfigMap, error) {
	if v == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(v, "/")
	if !ok {
		return nil, fmt.Errorf("--moves-configmap %q: want NAMESPACE/NAME", v)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fmt.Errorf("--moves-configmap %q: namespace: %s", v, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("--moves-configmap %q: name: %s", v, strings.Join(errs, "; "))
	}
	return &movesConfigMap{namespace: ns, name: name}, nil
}

// newUsageSource builds the load-watcher client of the flags, reading the CA
// bundle from caFile (the file --load-watcher-ca-file names, or where a
// check wrote it; empty skips reading it).
func newUsageSource(o *options, caFile string) (*lazyClient, error) {
	c, err := client.New(client.Config{Address: o.loadWatcherAddress, CAFile: caFile, StaleAfter: o.loadWatcherStaleAfter})
	if err != nil {
		return nil, fmt.Errorf("--load-watcher-address %q / --load-watcher-ca-file %q / --load-watcher-stale-after %v: %w",
			o.loadWatcherAddress, o.loadWatcherCAFile, o.loadWatcherStaleAfter, err)
	}
	return &lazyClient{client: c}, nil
}
