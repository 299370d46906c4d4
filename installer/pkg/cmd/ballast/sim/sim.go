// Package sim implements `ballast sim` as a plugin: it runs ballast-sim, the
// simulator's own program, with the same arguments and streams, so that the
// ballast binary carries no Kubernetes control plane.
package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
)

// Plugin is the program `ballast sim` runs.
const Plugin = "ballast-sim"

// NewCommand returns the sim command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "sim [ARGS...]",
		Short: "Simulate a cluster with the default scheduler and with Ballast, and compare (runs " + Plugin + ")",
		Long: "sim runs " + Plugin + ", the simulator, with the same arguments: a scenario on an in-process cluster,\n" +
			"once with the default kube-scheduler and once with Ballast, or served for kubectl with --serve.\n" +
			"`ballast sim --help` lists its flags. " + Plugin + " is a program of its own, so that ballast stays small;\n" +
			"it is looked for next to ballast, then on PATH.",
		// Every argument, --help included, is the plugin's.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				logger.V(1).Infof("Cannot tell where ballast is, looking for %s on PATH only: %v", Plugin, err)
			}
			path, err := lookPath(self)
			if err != nil {
				return err
			}
			return run(c.Context(), logger, streams, path, args)
		},
	}
}

// lookPath finds the plugin next to self (the running ballast), then on PATH.
func lookPath(self string) (string, error) {
	var beside string
	if self != "" {
		beside = filepath.Join(filepath.Dir(self), Plugin)
		if path, err := exec.LookPath(beside); err == nil {
			return path, nil
		}
	}
	if path, err := exec.LookPath(Plugin); err == nil {
		return path, nil
	}
	missing := "is not on PATH"
	if beside != "" {
		missing = "is neither at " + beside + " nor on PATH"
	}
	return "", fmt.Errorf("`ballast sim` runs %[1]s, which %[2]s: download the release asset %[1]s-%[3]s-%[4]s "+
		"and install it as %[1]s next to ballast or on PATH, or build it from a checkout with "+
		"`make build` (bin/%[1]s) or `cd simulator && go build ./cmd/%[1]s`", Plugin, missing, runtime.GOOS, runtime.GOARCH)
}

// run runs the plugin at path on the command's streams and ends with its
// exit status.
func run(ctx context.Context, logger *log.Logger, streams cli.IOStreams, path string, args []string) error {
	p := exec.Command(path, args...)
	p.Stdin, p.Stdout, p.Stderr = streams.In, streams.Out, streams.ErrOut
	logger.V(1).Infof("Running %s", path)
	if err := p.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	// Ctrl-C on a terminal reaches the plugin too; a SIGTERM sent to ballast
	// alone is passed on as the interrupt the plugin shuts down cleanly on.
	stop := context.AfterFunc(ctx, func() { _ = p.Process.Signal(os.Interrupt) })
	defer stop()
	err := p.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &cli.ExitError{Code: exitCode(exit.ProcessState)}
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	return nil
}

// exitCode is the plugin's exit status; a shell's 128+N when signal N
// killed it.
func exitCode(state *os.ProcessState) int {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}
