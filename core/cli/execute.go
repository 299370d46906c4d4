package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/cli/log"
)

// AddLogFlags declares -v and -q on root so that cobra accepts and documents
// them; Execute reads them before the command runs. verbosityUsage says what
// each level shows in this program.
func AddLogFlags(root *cobra.Command, verbosityUsage string) {
	root.PersistentFlags().IntP("verbosity", "v", 0, verbosityUsage)
	root.PersistentFlags().BoolP("quiet", "q", false, "print only results, warnings and errors")
}

// Execute runs root with args until it ends or Ctrl-C (or SIGTERM) cancels
// its context, and prints its error once, with the full chain at -v 1 or
// more. An ExitError is not printed: whoever ended with it has reported.
func Execute(logger *log.Logger, root *cobra.Command, args []string) error {
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
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var exit *ExitError
	if err != nil && !errors.As(err, &exit) {
		logger.Errorf("ERROR: %v", err)
		if logger.Verbosity() > 0 {
			fmt.Fprintf(logger.Writer(), "%+v\n", err)
		}
	}
	return err
}

// ExitError ends the program with Code, printing nothing more: the program
// it ran (a plugin) has said why.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is the status the program ends with after err: 0 without an
// error, an ExitError's code, else 1.
func ExitCode(err error) int {
	var exit *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	default:
		return 1
	}
}

// NewCommandFunc builds a program's command tree.
type NewCommandFunc func(logger *log.Logger, streams IOStreams) *cobra.Command

// Main runs a program's command tree with the process's arguments and
// streams and exits with its status; only main calls it.
func Main(newCommand NewCommandFunc) {
	os.Exit(ExitCode(Run(log.New(os.Stderr), StandardIOStreams(), os.Args[1:], newCommand)))
}

// Run runs a program's command tree with the given arguments and prints any
// error once, at the top.
func Run(logger *log.Logger, streams IOStreams, args []string, newCommand NewCommandFunc) error {
	return Execute(logger, newCommand(logger, streams), args)
}
