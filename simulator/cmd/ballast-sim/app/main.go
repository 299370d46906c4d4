// Package app is the entry point of ballast-sim, separated from main so it can be tested.
package app

import (
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/simulator/cmd/ballast-sim/sim"
)

// Main runs ballast-sim with the process's arguments and streams and exits with its status.
func Main() { cli.Main(sim.NewCommand) }

// Run runs ballast-sim with the given arguments and prints any error once, at the top.
func Run(logger *log.Logger, streams cli.IOStreams, args []string) error {
	return cli.Run(logger, streams, args, sim.NewCommand)
}
