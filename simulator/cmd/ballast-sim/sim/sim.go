// Package sim implements ballast-sim, the program `ballast sim` runs: run a
// scenario on an in-process cluster with the default kube-scheduler and with
// Ballast, and compare, or keep its cluster running for other tools with
// --serve.
package sim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/simulator/sim/record"
	simreport "github.com/ballast-sched/ballast/simulator/sim/report"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/simulator/cmd/ballast-sim/sim/report"
	"github.com/ballast-sched/ballast/simulator/scenario"
	engine "github.com/ballast-sched/ballast/simulator/sim"
	"github.com/ballast-sched/ballast/simulator/snapshot"
)

type flagpole struct {
	Scenario         string
	JSON             bool
	Report           string
	Seed             int64
	Duration         time.Duration
	DeschedulerEvery time.Duration
	List             bool
	SchedulerConfig  string
	Policy           string
	Values           values.Options
	FromCluster      bool
	Save             string
	Kube             kube.Flags
	Serve            serveFlags
	Version          bool
}

// NewCommand returns the root command of ballast-sim. Its help calls it
// `ballast sim`, the way users reach it.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:         "ballast-sim [SCENARIO.yaml | --scenario NAME]",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "ballast sim"},
		Short:       "Simulate a cluster with the default scheduler and with Ballast, and compare",
		Long: "sim runs a scenario (nodes, workloads with real usage profiles, events on a timeline) on an in-process\n" +
			"cluster twice on simulated time: once with the upstream kube-scheduler alone, once with Ballast's\n" +
			"load-watcher, scheduler and descheduler. It needs no cluster and no network. Built-in scenarios: " +
			strings.Join(scenario.BuiltinNames(), ", ") + ".\n\n" +
			"With --serve it starts the scenario's cluster once and keeps it running in real time for kubectl, k9s or\n" +
			"another scheduler, until Ctrl-C; `ballast sim report` measures its placement meanwhile.",
		Example: "  ballast sim --from-cluster --save my-cluster.yaml\n  ballast sim my-cluster.yaml -f my-values.yaml\n" +
			"  ballast sim --serve --scenario homelab-mixed --kubeconfig-out sim.kubeconfig",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if flags.Version {
				_, err := fmt.Fprintln(streams.Out, version.Line("ballast-sim"))
				return err
			}
			if err := checkServeFlags(c.Flags(), flags.Serve.On); err != nil {
				return err
			}
			if flags.Serve.On {
				return runServe(c.Context(), logger, streams, flags, args)
			}
			return runE(c.Context(), logger, streams, flags, args)
		},
	}
	c.SetOut(streams.Out)
	c.SetErr(streams.ErrOut)
	c.Flags().StringVar(&flags.Scenario, "scenario", "", "built-in scenario to run ("+strings.Join(scenario.BuiltinNames(), ", ")+")")
	c.Flags().BoolVar(&flags.JSON, "json", false, "print the full result as JSON instead of tables")
	c.Flags().StringVar(&flags.Report, "report", "", "also write a self-contained HTML report to this file")
	c.Flags().DurationVar(&flags.Duration, "duration", 0, "override the scenario's simulated duration (events after it do not happen)")
	c.Flags().Int64Var(&flags.Seed, "seed", 0, "override the scenario's seed")
	c.Flags().DurationVar(&flags.DeschedulerEvery, "descheduler-every", 0, "simulated time between descheduling cycles (default 5m as the chart installs it; with chart values, their descheduler.deschedulingInterval)")
	flags.Values.AddFlags(c.Flags())
	c.Flags().StringVar(&flags.SchedulerConfig, "scheduler-config", "", "KubeSchedulerConfiguration file for the Ballast run (default: the shipped default-scheduler profile)")
	c.Flags().StringVar(&flags.Policy, "descheduler-policy", "", "DeschedulerPolicy file for the Ballast run (default: the shipped policy)")
	c.Flags().BoolVar(&flags.FromCluster, "from-cluster", false, "snapshot the cluster (nodes, Deployments, usage from metrics-server; read-only) and simulate it")
	c.Flags().StringVar(&flags.Save, "save", "", "write the scenario that was run to this file (useful with --from-cluster)")
	flags.Kube.AddFlags(c.Flags())
	c.Flags().BoolVar(&flags.List, "list", false, "list the built-in scenarios and exit")
	flags.Serve.addFlags(c.Flags())
	cli.AddLogFlags(c, "log detail: 1 shows more steps and errors' full chain, 2 and up the in-process control plane's logs, at that klog level")
	// Not cobra's own --version: Kubernetes's verflag already puts a global
	// --version of another type among the persistent flags.
	c.Flags().BoolVar(&flags.Version, "version", false, "print the version")
	c.AddCommand(report.NewCommand(logger, streams))
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, args []string) error {
	if flags.List {
		for _, name := range scenario.BuiltinNames() {
			fmt.Fprintln(streams.Out, name)
		}
		return nil
	}
	opts, err := ballastOptions(ctx, flags)
	if err != nil {
		return err
	}
	sc, err := prepare(ctx, logger, flags, args)
	if err != nil {
		return err
	}
	if flags.Duration != 0 {
		if flags.Duration < sc.Step.Duration {
			return fmt.Errorf("--duration %s is shorter than the scenario's step %s", flags.Duration, sc.Step.Duration)
		}
		sc.Duration.Duration = flags.Duration
	}
	controlPlaneLogs(logger.Verbosity())
	opts.Progress = progressWriter(logger, streams)
	start := time.Now()
	c, err := engine.Compare(ctx, sc, opts)
	if err != nil {
		return err
	}
	logger.Infof("Simulated %s twice in %s.", sc.Duration.Duration, time.Since(start).Round(time.Second))
	if flags.Report != "" {
		if err := writeReport(flags.Report, c); err != nil {
			return err
		}
		logger.Infof("Wrote %s.", flags.Report)
	}
	if flags.JSON {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return simreport.WriteText(streams.Out, c)
}

// prepare loads the scenario, saves it when asked and applies --seed.
func prepare(ctx context.Context, logger *log.Logger, flags *flagpole, args []string) (*scenario.Scenario, error) {
	sc, err := load(ctx, logger, flags, args)
	if err != nil {
		return nil, err
	}
	if flags.Save != "" {
		if err := scenario.Save(flags.Save, sc); err != nil {
			return nil, err
		}
		logger.Infof("Wrote the scenario to %s.", flags.Save)
	}
	if flags.Seed != 0 {
		sc.Seed = flags.Seed
	}
	return sc, nil
}

// progressWriter is where progress lines go: stderr unless -q.
func progressWriter(logger *log.Logger, streams cli.IOStreams) io.Writer {
	if logger.Quiet() {
		return nil
	}
	return streams.ErrOut
}

// load reads the scenario named by the argument or --scenario, or takes it
// from the cluster.
func load(ctx context.Context, logger *log.Logger, flags *flagpole, args []string) (*scenario.Scenario, error) {
	sources := 0
	for _, given := range []bool{len(args) == 1, flags.Scenario != "", flags.FromCluster} {
		if given {
			sources++
		}
	}
	switch {
	case sources > 1:
		return nil, errors.New("give one of a scenario file, --scenario or --from-cluster, not several")
	case flags.FromCluster:
		return fromCluster(ctx, logger, flags)
	case len(args) == 1:
		return scenario.Load(args[0])
	case flags.Scenario != "":
		return scenario.Builtin(flags.Scenario)
	default:
		return nil, fmt.Errorf("no scenario: give a file, --from-cluster or --scenario (one of %s)", strings.Join(scenario.BuiltinNames(), ", "))
	}
}

// readOptional returns the content of path, or "" when no path was given.
func readOptional(path, what string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the %s: %w", what, err)
	}
	return string(data), nil
}

func fromCluster(ctx context.Context, logger *log.Logger, flags *flagpole) (*scenario.Scenario, error) {
	cfg, err := flags.Kube.Getter("", kube.K3sKubeconfig).ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	metrics, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the metrics client: %w", err)
	}
	logger.Infof("Taking a snapshot of the cluster at %s (read-only)…", cfg.Host)
	return snapshot.Take(ctx, client, metrics)
}

func writeReport(path string, c *record.Comparison) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the report: %w", err)
	}
	if err := simreport.WriteHTML(f, c); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the report: %w", err)
	}
	return f.Close()
}

// controlPlaneLogs keeps the in-process control plane's klog lines (its
// start-up lines are logged by kube-apiserver at level 0) out of the output
// below verbosity 2; from 2 on they show, with klog's own detail at that
// level (the chart runs the components at -v=2).
func controlPlaneLogs(verbosity int) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if verbosity >= 2 {
		_ = fs.Set("v", strconv.Itoa(verbosity))
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
