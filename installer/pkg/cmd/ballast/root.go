// Package ballast is the root of the ballast command tree.
package ballast

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	buildversion "github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/explain"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/install"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/kubeconfig"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/render"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/sim"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/status"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/uninstall"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/version"
)

type flagpole struct {
	Version bool
}

// NewCommand returns the root ballast command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "ballast",
		Short: "Install and inspect Ballast, load-aware scheduling for k3s and Kubernetes",
		Long: "ballast installs Ballast (load-watcher, a load-aware scheduler and a descheduler) on k3s in one command,\n" +
			"or on any cluster through Helm, renders its manifests, and shows how loaded your nodes really are.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(c *cobra.Command, _ []string) {
			cli.WarnDeprecatedFlags(logger, c)
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if flags.Version {
				_, err := fmt.Fprintln(streams.Out, buildversion.Line("ballast"))
				return err
			}
			return cli.MissingSubcommand(c)
		},
	}
	cli.RequireSubcommand(c)
	c.SetOut(streams.Out)
	c.SetErr(streams.ErrOut)
	cli.AddLogFlags(c, "log detail: 1 shows API and Helm steps, errors get their full chain")
	// Not cobra's own --version, whose line differs from the version
	// command's; a flag of the root alone, never of a subcommand.
	c.Flags().BoolVar(&flags.Version, "version", false, "print the version, as the version command does")
	c.AddCommand(install.NewCommand(logger, streams))
	c.AddCommand(uninstall.NewCommand(logger, streams))
	c.AddCommand(kubeconfig.NewCommand(logger, streams))
	c.AddCommand(render.NewCommand(logger, streams))
	c.AddCommand(status.NewCommand(logger, streams))
	c.AddCommand(explain.NewCommand(logger, streams))
	c.AddCommand(sim.NewCommand(logger, streams))
	c.AddCommand(version.NewCommand(streams))
	return c
}
