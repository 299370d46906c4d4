package sim

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/simulator/cmd/ballast-sim/sim/report"
	engine "github.com/ballast-sched/ballast/simulator/sim"
)

// serveFlags are the flags of --serve.
type serveFlags struct {
	On                 bool
	KubeconfigOut      string
	Scheduler          string
	Descheduler        string
	Speed              float64
	LoadWatcherAddress string
}

// serveOnly lists the flags that mean something only with --serve, and
// runOnly those that mean nothing with it.
var (
	serveOnly = []string{"kubeconfig-out", "scheduler", "descheduler", "speed", "load-watcher-address"}
	runOnly   = []string{"report", "duration"}
)

func (f *serveFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.On, "serve", false, "keep the scenario's cluster running in real time for kubectl and other schedulers, until Ctrl-C")
	fs.StringVar(&f.KubeconfigOut, "kubeconfig-out", "", "with --serve: write the cluster's kubeconfig (mode 0600) to this file; removed on shutdown")
	fs.StringVar(&f.Scheduler, "scheduler", string(engine.ModeBallast), "with --serve: the scheduler the simulator runs: ballast, default, or none to leave pods to yours")
	fs.StringVar(&f.Descheduler, "descheduler", "", "with --serve: run the descheduler, on or off (default: on with --scheduler ballast, else off)")
	fs.Float64Var(&f.Speed, "speed", 1, "with --serve: run the scenario's usage and events this many times faster than the clock")
	fs.StringVar(&f.LoadWatcherAddress, "load-watcher-address", "127.0.0.1:0", "with --serve: where load-watcher's API listens")
}

// checkServeFlags rejects flags given with the wrong mode.
func checkServeFlags(fs *pflag.FlagSet, serve bool) error {
	wrong, mode := serveOnly, "need --serve"
	if serve {
		wrong, mode = runOnly, "do not apply to --serve"
	}
	var given []string
	for _, name := range wrong {
		if fs.Changed(name) {
			given = append(given, "--"+name)
		}
	}
	if len(given) > 0 {
		return fmt.Errorf("%s %s", strings.Join(given, ", "), mode)
	}
	return nil
}

// options turns the flags into the simulator's options.
func (f *serveFlags) options() (engine.ServeOptions, error) {
	opts := engine.ServeOptions{Scheduler: engine.Mode(f.Scheduler), Speed: f.Speed, LoadWatcherAddress: f.LoadWatcherAddress}
	switch f.Descheduler {
	case "":
		opts.Descheduler = opts.Scheduler == engine.ModeBallast
	case "on", "off":
		opts.Descheduler = f.Descheduler == "on"
	default:
		return opts, fmt.Errorf("--descheduler %q: want on or off", f.Descheduler)
	}
	// The simulator takes a zero speed as unset; the flag has its default.
	if f.Speed <= 0 {
		return opts, fmt.Errorf("--speed %g: must be positive", f.Speed)
	}
	if f.KubeconfigOut == "" {
		return opts, fmt.Errorf("--serve needs --kubeconfig-out FILE, where the cluster's kubeconfig is written")
	}
	abs, err := filepath.Abs(f.KubeconfigOut)
	if err != nil {
		return opts, fmt.Errorf("--kubeconfig-out: %w", err)
	}
	opts.KubeconfigOut = abs
	return opts, nil
}

// runServe serves the scenario until ctx ends (Ctrl-C), then prints the
// placement that resulted.
func runServe(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, args []string) error {
	opts, err := flags.Serve.options()
	if err != nil {
		return err
	}
	ballast, err := ballastOptions(ctx, flags)
	if err != nil {
		return err
	}
	opts.DeschedulerEvery, opts.SchedulerConfig, opts.DeschedulerPolicy = ballast.DeschedulerEvery, ballast.SchedulerConfig, ballast.DeschedulerPolicy
	opts.Windows = ballast.Windows
	sc, err := prepare(ctx, logger, flags, args)
	if err != nil {
		return err
	}
	controlPlaneLogs(logger.Verbosity())
	if w := progressWriter(logger, streams); w != nil {
		opts.Log = w
	}
	logger.Infof("Starting the cluster of %s…", sc.Name)
	srv, err := engine.Serve(ctx, sc, opts)
	if err != nil {
		return err
	}
	printServing(streams.Out, sc.Name, opts, srv)
	<-ctx.Done()
	logger.Infof("Shutting down…")
	placement, err := srv.Shutdown(context.Background())
	if err != nil {
		return err
	}
	return report.Print(streams.Out, placement, flags.JSON)
}

func printServing(out io.Writer, name string, opts engine.ServeOptions, srv *engine.Server) {
	descheduler := "off"
	if opts.Descheduler {
		descheduler = "on"
	}
	kc := shellQuote(srv.KubeconfigPath)
	fmt.Fprintf(out, "Serving %s: scheduler %s, descheduler %s, speed %g×. Stop with Ctrl-C.\n", name, opts.Scheduler, descheduler, opts.Speed)
	fmt.Fprintf(out, "  API server:   %s\n", srv.APIServer)
	fmt.Fprintf(out, "  load-watcher: %s (%s/watcher, %s/api/v1/usage)\n", srv.LoadWatcher, srv.LoadWatcher, srv.LoadWatcher)
	fmt.Fprintf(out, "  kubeconfig:   %s\n\n", srv.KubeconfigPath)
	fmt.Fprintf(out, "  kubectl --kubeconfig %s get nodes\n", kc)
	fmt.Fprintf(out, "  ballast sim report --kubeconfig %s\n", kc)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
