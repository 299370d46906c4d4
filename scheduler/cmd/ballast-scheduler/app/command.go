// Package app builds the ballast-scheduler command: kube-scheduler's own
// command with Ballast's plugins registered and Ballast's flags added.
package app

import (
	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// NewCommand returns the ballast-scheduler command. Usage comes from the
// source the --load-watcher-* flags describe.
func NewCommand() *cobra.Command {
	o := NewOptions()
	return newCommand(o, FlagSource(o))
}

// NewCommandWithSource returns the command with usage from source instead
// of the flags (tests and the simulator).
func NewCommandWithSource(source SourceFactory) *cobra.Command {
	return newCommand(NewOptions(), source)
}

func newCommand(o *Options, source SourceFactory) *cobra.Command {
	cmd := schedapp.NewSchedulerCommand(Plugins(source)...)
	cmd.Use = "ballast-scheduler"
	cmd.Long = "ballast-scheduler is kube-scheduler with Ballast's load-aware plugins " +
		"(LoadAware, LoadVariationRiskBalancing, PodCountBalance, UsageAwareFit), " +
		"reading real node usage from load-watcher."
	o.AddFlags(cmd.Flags())
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := o.Validate(); err != nil {
			return err
		}
		return run(c, args)
	}
	return cmd
}

// Main runs the command and returns the process's exit code.
func Main() int {
	return cli.Run(NewCommand())
}
