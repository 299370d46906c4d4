// Command bench-balance runs every built-in scenario with its fixed seed,
// once with the default kube-scheduler and once with Ballast, and prints one
// table of balance figures and whether Ballast meets its targets.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim"
)

func main() {
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	verbose := flag.Bool("verbose", false, "show the control plane's log lines on stderr")
	check := flag.Bool("check", false, "exit with status 2 when a scenario misses its target")
	flag.Parse()
	if !*verbose {
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	names := flag.Args()
	if len(names) == 0 {
		names = scenario.BuiltinNames()
	}
	var results []*sim.Comparison
	for _, name := range names {
		sc, err := scenario.Builtin(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s (seed %d, %s)…\n", name, sc.Seed, sc.Duration.Duration)
		c, err := sim.Compare(ctx, sc, sim.Options{})
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
			os.Exit(1)
		}
		results = append(results, c)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tNODES\tSPREAD DEF\tSPREAD BAL\tRATIO\tCV DEF\tCV BAL\tHOTTEST DEF\tHOTTEST BAL\tEVICTIONS (HOT/NEEDED)\tHOT CYCLES\tPING-PONG\tTARGET\tMET")
	failed := false
	for _, c := range results {
		d, b := c.Default.Summary, c.Ballast.Summary
		target, met := sim.Target(c)
		failed = failed || !met
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%s %.0f%%\t%s %.0f%%\t%d (%d/%d)\t%d\t%d\t%s\t%s\n", c.Scenario,
			len(b.Final), d.Spread, b.Spread, c.SpreadRatio(), d.CV, b.CV, d.Hottest, d.HottestUtilisation, b.Hottest, b.HottestUtilisation,
			c.Ballast.Evictions, c.Ballast.HotEvictions, c.Ballast.NeededEvictions, c.Ballast.HotCycles, c.Ballast.PingPong, target, yesNo(met))
	}
	_ = w.Flush()
	fmt.Println()
	for _, c := range results {
		fmt.Printf("%s, pods at the end — default: %s\n%s  ballast: %s; pods placed on a hogged node: default %d, ballast %d\n",
			c.Scenario, sim.FinalPlacement(c.Default), "", sim.FinalPlacement(c.Ballast), c.Default.PlacedOnHog, c.Ballast.PlacedOnHog)
	}
	if failed && *check {
		os.Exit(2)
	}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
