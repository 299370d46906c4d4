// Package version implements `ballast version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/version"
)

// NewCommand returns the version command. The root's --version prints the
// same line.
func NewCommand(streams cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of ballast and of the Kubernetes libraries it is built with",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(streams.Out, version.Line("ballast"))
			return err
		},
	}
}
