package explain

import (
	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
)

func newNodeCommand(logger *log.Logger, streams cli.IOStreams, flags *flagpole) *cobra.Command {
	return nil
}
