// Package app is the entry point of the ballast CLI, separated from main so it can be tested.
package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/installer/pkg/cmd"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast"
	"github.com/ballast-sched/ballast/installer/pkg/log"
)

// Main runs the CLI with the process's arguments and streams and exits with its status.
func Main() {
	if err := Run(log.New(os.Stderr), cmd.StandardIOStreams(), os.Args[1:]); err != nil {
		os.Exit(1)
	}
}

// Run runs the CLI with the given arguments and prints any error once, at the top.
func Run(logger *log.Logger, streams cmd.IOStreams, args []string) error {
	// -v and -q act on the logger before the command runs, so parse them first.
	flags := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flags.ParseErrorsWhitelist.UnknownFlags = true
	flags.Usage = func() {}
	verbosity := flags.IntP("verbosity", "v", 0, "")
	quiet := flags.BoolP("quiet", "q", false, "")
	_ = flags.Parse(args) // the command parses again and reports flag errors itself
	logger.SetVerbosity(*verbosity)
	logger.SetQuiet(*quiet)

	// Ctrl-C cancels API calls and waits instead of leaving them running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := ballast.NewCommand(logger, streams)
	c.SetArgs(args)
	if err := c.ExecuteContext(ctx); err != nil {
		logError(logger, err)
		return err
	}
	return nil
}

func logError(logger *log.Logger, err error) {
	logger.Errorf("ERROR: %v", err)
	if logger.Verbosity() > 0 {
		fmt.Fprintf(logger.Writer(), "%+v\n", err)
	}
}
