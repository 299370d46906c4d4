// Package app is the entry point of ballast-sim, separated from main so it can be tested.
package app

import (
	"os"

	"github.com/ballast-sched/ballast/installer/pkg/cmd"
	"github.com/ballast-sched/ballast/installer/pkg/log"
	"github.com/ballast-sched/ballast/simulator/cmd/ballast-sim/sim"
)

// Main runs ballast-sim with the process's arguments and streams and exits with its status.
func Main() {
	os.Exit(cmd.ExitCode(Run(log.New(os.Stderr), cmd.StandardIOStreams(), os.Args[1:])))
}

// Run runs ballast-sim with the given arguments and prints any error once, at the top.
func Run(logger *log.Logger, streams cmd.IOStreams, args []string) error {
	return cmd.Execute(logger, sim.NewCommand(logger, streams), args)
}
