// Command ballast-demo starts a simulated homelab in-process and prints where
// the default kube-scheduler places a Deployment. It needs no cluster and no
// network, and exits by itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/simulator/demo"
)

func main() {
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	verbose := flag.Bool("verbose", false, "show the control plane's log lines on stderr")
	flag.Parse()
	if !*verbose {
		// The control plane logs its start-up at level 0; the table is the output.
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.Run(ctx, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "ballast-demo: %v\n", err)
		os.Exit(1)
	}
}
