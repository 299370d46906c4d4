// Command bench-balance runs every built-in scenario with its fixed seed on
// three stacks: the default kube-scheduler alone, the upstream load-aware
// peer (scheduler-plugins' Trimaran and the descheduler's
// LowNodeUtilization on metrics) and Ballast. It prints one table of
// balance figures and whether Ballast meets its targets.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ballast-sched/ballast/simulator/sim/record"
	simreport "github.com/ballast-sched/ballast/simulator/sim/report"
	"github.com/ballast-sched/ballast/simulator/sim/stack"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim"
)

func main() {
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	verbose := flag.Bool("verbose", false, "show the control plane's and the peer scheduler's log lines on stderr")
	check := flag.Bool("check", false, "exit with status 2 when a scenario misses its target")
	peers := flag.Bool("peers", true, "also run the upstream load-aware peer (needs `make peers-bins`; real time: each scenario's duration over the peer speed)")
	rounds := flag.Int("rounds", 3, "runs of each scenario on the default and Ballast stacks; the round with the median Ballast/default spread ratio is reported (kube-scheduler breaks ties at random, so one run is noisy)")
	parallel := flag.Int("parallel", 0, "peer runs at a time, 0 for all at once (each is its own control plane and mostly idles)")
	peerScheduler := flag.String("peer-scheduler", "", "the peer's kube-scheduler binary (default $"+stack.PeerSchedulerEnv+" or _output/peers/bin/trimaran-scheduler)")
	flag.Parse()
	if !*verbose {
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *rounds < 1 {
		fmt.Fprintln(os.Stderr, "bench-balance: -rounds must be at least 1")
		os.Exit(1)
	}
	if err := run(ctx, flag.Args(), *rounds, *peers, *parallel, *peerScheduler, *verbose, *check); err != nil {
		stop()
		fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, names []string, rounds int, peers bool, parallel int, peerScheduler string, verbose, check bool) error {
	if len(names) == 0 {
		names = scenario.BuiltinNames()
	}
	scenarios := make([]*scenario.Scenario, len(names))
	for i, name := range names {
		sc, err := scenario.Builtin(name)
		if err != nil {
			return err
		}
		scenarios[i] = sc
	}
	var peerRuns *peerRunner
	if peers {
		bin := peerScheduler
		if bin == "" {
			var err error
			if bin, err = stack.FindPeerScheduler(); err != nil {
				return fmt.Errorf("%w; or leave the peer out with -peers=false", err)
			}
		}
		var log io.Writer
		if verbose {
			log = os.Stderr
		}
		peerRuns = startPeers(ctx, scenarios, sim.PeerOptions{Scheduler: bin, Log: log}, parallel)
	}
	results := make([]*record.Comparison, len(scenarios))
	ratios := make([][]float64, len(scenarios))
	for i, sc := range scenarios {
		var runs []*record.Comparison
		for r := range rounds {
			fmt.Fprintf(os.Stderr, "%s (seed %d, %s), round %d of %d…\n", sc.Name, sc.Seed, sc.Duration.Duration, r+1, rounds)
			c, err := sim.Compare(ctx, sc, sim.Options{})
			if err != nil {
				return err
			}
			runs = append(runs, c)
		}
		results[i], ratios[i] = medianRound(runs)
	}
	if peerRuns != nil {
		fmt.Fprintln(os.Stderr, "Waiting for the peer runs…")
		peerResults, err := peerRuns.wait()
		if err != nil {
			return err
		}
		for i, c := range results {
			c.Peer = peerResults[i]
		}
	}
	if !writeTable(os.Stdout, results, ratios) && check {
		os.Exit(2)
	}
	return nil
}

// peerRunner runs the peer on every scenario in the background.
type peerRunner struct {
	wg      sync.WaitGroup
	results []*record.Result
	errs    []error
}

// startPeers starts a peer run per scenario, parallel at a time (0: all).
// They run in real time, alongside the simulated-clock runs.
func startPeers(ctx context.Context, scenarios []*scenario.Scenario, opts sim.PeerOptions, parallel int) *peerRunner {
	if parallel <= 0 {
		parallel = len(scenarios)
	}
	p := &peerRunner{results: make([]*record.Result, len(scenarios)), errs: make([]error, len(scenarios))}
	slots := make(chan struct{}, parallel)
	for i, sc := range scenarios {
		p.wg.Go(func() {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				p.errs[i] = ctx.Err()
				return
			}
			defer func() { <-slots }()
			speed := sim.PeerSpeed(sc.Step.Duration)
			fmt.Fprintf(os.Stderr, "%s: peer run started (speed %g×, %s of real time)…\n", sc.Name, speed,
				time.Duration(float64(sc.Duration.Duration)/speed))
			start := time.Now()
			r, err := sim.RunPeer(ctx, sc, opts)
			if err != nil {
				p.errs[i] = fmt.Errorf("peer run of %s: %w", sc.Name, err)
				fmt.Fprintf(os.Stderr, "%s: peer run failed after %s\n", sc.Name, time.Since(start).Round(time.Second))
				return
			}
			fmt.Fprintf(os.Stderr, "%s: peer run done in %s\n", sc.Name, time.Since(start).Round(time.Second))
			p.results[i] = r
		})
	}
	return p
}

// wait returns every peer result, or the first failure.
func (p *peerRunner) wait() ([]*record.Result, error) {
	p.wg.Wait()
	for _, err := range p.errs {
		if err != nil {
			return nil, err
		}
	}
	return p.results, nil
}

// writeTable prints the comparison table and where the pods ended, and
// reports whether every scenario met its target.
func writeTable(out io.Writer, results []*record.Comparison, ratios [][]float64) bool {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tNODES\tSPREAD DEF\tSPREAD PEER\tSPREAD BAL\tBAL/DEF\tBAL/BEST\tHOTTEST DEF\tHOTTEST PEER\tHOTTEST BAL\tEVICT PEER\tEVICT BAL (HOT/NEEDED)\tHOT CYCLES\tPING-PONG\tBAL/DEF ROUNDS\tTARGET\tMET")
	allMet := true
	for i, c := range results {
		d, b := c.Default.Summary, c.Ballast.Summary
		target, met := simreport.Target(c)
		allMet = allMet && met
		peerSpread, peerHottest, peerEvictions := "-", "-", "-"
		if p := c.Peer; p != nil {
			peerSpread = fmt.Sprintf("%.1f", p.Summary.Spread)
			peerHottest = fmt.Sprintf("%s %.0f%%", p.Summary.Hottest, p.Summary.HottestUtilisation)
			peerEvictions = fmt.Sprint(p.Evictions)
		}
		r := c.Ballast
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%s\t%.1f\t%.2f\t%.2f\t%s %.0f%%\t%s\t%s %.0f%%\t%s\t%d (%d/%d)\t%d\t%d\t%s\t%s\t%s\n", c.Scenario,
			len(b.Final), d.Spread, peerSpread, b.Spread, c.SpreadRatio(), c.BestPeerRatio(), d.Hottest, d.HottestUtilisation, peerHottest,
			b.Hottest, b.HottestUtilisation, peerEvictions, r.Evictions, r.HotEvictions, r.NeededEvictions, r.HotCycles, r.PingPong, formatRatios(ratios[i]), target, yesNo(met))
	}
	_ = w.Flush()
	fmt.Fprintln(out, "BAL/DEF is Ballast's spread over the default scheduler's, BAL/BEST over the best other stack's (the lower of default and peer).")
	fmt.Fprintln(out)
	for _, c := range results {
		fmt.Fprintf(out, "%s, pods at the end — default: %s\n", c.Scenario, simreport.FinalPlacement(c.Default))
		hog := fmt.Sprintf("default %d", c.Default.PlacedOnHog)
		if c.Peer != nil {
			fmt.Fprintf(out, "  peer: %s (ping-pong %d)\n", simreport.FinalPlacement(c.Peer), c.Peer.PingPong)
			hog += fmt.Sprintf(", peer %d", c.Peer.PlacedOnHog)
		}
		fmt.Fprintf(out, "  ballast: %s; pods placed on a hogged node: %s, ballast %d\n", simreport.FinalPlacement(c.Ballast), hog, c.Ballast.PlacedOnHog)
	}
	return allMet
}

// medianRound returns the run whose Ballast/default spread ratio is the
// median of runs (the lower middle one of an even count), and every run's
// ratio in the order they ran.
func medianRound(runs []*record.Comparison) (*record.Comparison, []float64) {
	ratios := make([]float64, len(runs))
	for i, c := range runs {
		ratios[i] = c.SpreadRatio()
	}
	order := slices.Clone(runs)
	slices.SortStableFunc(order, func(a, b *record.Comparison) int { return cmp.Compare(a.SpreadRatio(), b.SpreadRatio()) })
	return order[(len(order)-1)/2], ratios
}

func formatRatios(ratios []float64) string {
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(parts, " ")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
