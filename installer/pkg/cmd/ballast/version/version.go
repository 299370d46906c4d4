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
	var output string
	c := &cobra.Command{
		Use:     "version",
		Short:   "Print the version of ballast and of the Kubernetes libraries it is built with",
		Example: "  ballast version\n  ballast version -o json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if output != "" {
				return cli.WriteDocument(streams.Out, version.Get("ballast"), output)
			}
			_, err := fmt.Fprintln(streams.Out, version.Line("ballast"))
			return err
		},
	}
	cli.AddOutputFlag(c.Flags(), &output, "the version, the commit, the Kubernetes libraries, Go and the platform", nil)
	return c
}
