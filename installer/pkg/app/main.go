// Package app is the entry point of the ballast CLI, separated from main so it can be tested.
package app

import (
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast"
)

// Main runs the CLI with the process's arguments and streams and exits with its status.
func Main() { cli.Main(ballast.NewCommand) }

// Run runs the CLI with the given arguments and prints any error once, at the top.
func Run(logger *log.Logger, streams cli.IOStreams, args []string) error {
	return cli.Run(logger, streams, args, ballast.NewCommand)
}
