// Package app is the entry point of the ballast CLI, separated from main so it can be tested.
package app

import (
	"os"

	"github.com/ballast-sched/ballast/installer/pkg/cmd"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast"
	"github.com/ballast-sched/ballast/installer/pkg/log"
)

// Main runs the CLI with the process's arguments and streams and exits with its status.
func Main() {
	os.Exit(cmd.ExitCode(Run(log.New(os.Stderr), cmd.StandardIOStreams(), os.Args[1:])))
}

// Run runs the CLI with the given arguments and prints any error once, at the top.
func Run(logger *log.Logger, streams cmd.IOStreams, args []string) error {
	return cmd.Execute(logger, ballast.NewCommand(logger, streams), args)
}
