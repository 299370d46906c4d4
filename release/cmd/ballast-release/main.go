// Command ballast-release builds every artifact of a release into one
// directory and checks that they belong together (release/pkg/release).
//
//	ballast-release build --root . --out _output/release [--version X.Y.Z] [--registry R]
//	ballast-release verify _output/release
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ballast-sched/ballast/release/pkg/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballast-release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want a command: build or verify")
	}
	switch args[0] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ContinueOnError)
		o := release.Options{Log: os.Stderr}
		fs.StringVar(&o.Root, "root", ".", "the repository's root")
		fs.StringVar(&o.Out, "out", "_output/release", "where the release goes; must not exist or be empty")
		fs.StringVar(&o.Version, "version", "", "the release's version, which must be the chart's (default: the chart's)")
		fs.StringVar(&o.Registry, "registry", "", "the images' registry, which must be the chart's (default: the chart's)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := release.Build(ctx, o); err != nil {
			return err
		}
		return release.Verify(ctx, o.Out)
	case "verify":
		if len(args) != 2 {
			return fmt.Errorf("verify takes the release directory")
		}
		return release.Verify(ctx, args[1])
	}
	return fmt.Errorf("unknown command %q: want build or verify", args[0])
}
