// Command ballast-k3s is the k3s server of the k3s lane (e2e/pkg/k3sserver):
// the parts of k3s that Ballast's k3s install path meets, beside the lane's
// real control plane and node, in a view of the host where k3s's files are
// where k3s keeps them. The lane starts it in a mount namespace of its own.
//
//	ballast-k3s --spec spec.json server [k3s server flags]   # the server, until SIGTERM
//	ballast-k3s --spec spec.json exec -- COMMAND [ARGS]       # a command on the server (sudo ballast install)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/e2e/pkg/k3sserver"
)

func main() {
	fs := flag.NewFlagSet("ballast-k3s", flag.ExitOnError)
	specFile := fs.String("spec", "", "the lane's JSON spec of the server (k3sserver.Spec)")
	hostname := fs.String("hostname", "", "set this host name first (the lane starts the server in a UTS namespace of its own)")
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if *hostname != "" {
		if err := syscall.Sethostname([]byte(*hostname)); err != nil {
			fmt.Fprintln(os.Stderr, "ballast-k3s: setting the host name:", err)
			os.Exit(1)
		}
	}
	if err := run(*specFile, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "ballast-k3s:", err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func run(specFile string, args []string) error {
	raw, err := os.ReadFile(specFile)
	if err != nil {
		return fmt.Errorf("reading the spec: %w", err)
	}
	var spec k3sserver.Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("reading the spec %s: %w", specFile, err)
	}
	if len(args) == 0 {
		return fmt.Errorf("want a command: server or exec")
	}
	switch args[0] {
	case "exec":
		argv := args[1:]
		if len(argv) > 0 && argv[0] == "--" {
			argv = argv[1:]
		}
		return k3sserver.Exec(spec, argv)
	case "server":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		ctx = klog.NewContext(ctx, klog.Background().WithName("k3s"))
		return k3sserver.Run(ctx, spec, args)
	}
	return fmt.Errorf("unknown command %q: want server or exec", args[0])
}
