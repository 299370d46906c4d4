// Package app is the ballast-images command: flags, validation and the
// build from binaries to written images.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

// Streams are where the command writes: results (the size table) to Out,
// progress and errors to ErrOut.
type Streams struct {
	Out    io.Writer
	ErrOut io.Writer
}

// Main runs the command with the process's arguments and exits with its
// status; the only function that calls os.Exit.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, Streams{Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stop()
	if errors.Is(err, pflag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballast-images: %v\n", err)
		os.Exit(1)
	}
}

// Run parses args, builds every component for every platform and writes
// (and with --push, pushes) the images.
func Run(ctx context.Context, streams Streams, args []string) error {
	flags := &flagpole{}
	fs := newFlagSet(flags)
	fs.SetOutput(streams.ErrOut)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg, err := flags.complete(fs)
	if err != nil {
		return err
	}
	return buildImages(ctx, streams, cfg)
}
