// Command bench-balance runs scenarios (every built-in one, or the built-in
// names and scenario files given, a `ballast sim --from-cluster --save`
// snapshot of one's own cluster included) with their fixed seeds on three
// stacks: the default kube-scheduler alone, the upstream load-aware peer
// (scheduler-plugins' Trimaran and the descheduler's LowNodeUtilization on
// metrics) and Ballast, and finds the best placement possible for each (the
// oracle). It prints one table of balance figures, whether Ballast meets its
// targets, and a digest of every simulated run: the same scenario, values
// and binary give the same digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ballast-sched/ballast/simulator/sim/oracle"
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
	rounds := flag.Int("rounds", 1, "runs of each scenario on the default and Ballast stacks; every round must give the same digests (a simulation is repeatable), or bench-balance fails")
	parallel := flag.Int("parallel", 0, "peer runs at a time, 0 for all at once (each is its own control plane and mostly idles)")
	peerScheduler := flag.String("peer-scheduler", "", "the peer's kube-scheduler binary (default $"+stack.PeerSchedulerEnv+" or _output/peers/bin/trimaran-scheduler)")
	random := flag.Int("random", 0, "run this many random homelabs (scenario.Random) instead of named scenarios, and report their distribution")
	seed := flag.Int64("seed", 1, "the first random homelab's seed; the others follow it")
	nodes := flag.String("nodes", "2-60", "with -random: the range of the random homelabs' node counts, MIN-MAX")
	duration := flag.Duration("duration", time.Hour, "with -random: the random homelabs' simulated duration")
	save := flag.String("save", "", "with -random: write each random homelab to DIR/NAME.yaml, to run again with `ballast sim DIR/NAME.yaml`")
	jobs := flag.Int("jobs", 1, "simulations at a time, each in a process of its own (a simulation uses about two thirds of a core: -jobs 2 on two cores runs a set in about two thirds of the time, with the same digests)")
	one := flag.String("one", "", "run only the scenario in this file and print its comparison as JSON (what -jobs runs in each process)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process to this file (the simulations run in it only with -jobs 1)")
	flag.Parse()
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
			os.Exit(1)
		}
		defer stopProfile()
	}
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
	if *one != "" {
		if err := compareOne(ctx, *one, *rounds, os.Stdout); err != nil {
			stop()
			fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "bench-balance: -jobs must be at least 1")
		os.Exit(1)
	}
	var scenarios []*scenario.Scenario
	var err error
	if *random > 0 {
		scenarios, err = randomScenarios(*random, *seed, *nodes, *duration)
		if err == nil && *save != "" {
			err = saveScenarios(*save, scenarios)
		}
	} else {
		scenarios, err = loadScenarios(flag.Args())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
		os.Exit(1)
	}
	if err := run(ctx, scenarios, *rounds, *jobs, *peers, *parallel, *peerScheduler, *verbose, *check, *random > 0); err != nil {
		stop()
		fmt.Fprintf(os.Stderr, "bench-balance: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenarios []*scenario.Scenario, rounds, jobs int, peers bool, parallel int, peerScheduler string, verbose, check, random bool) error {
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
	var results []*record.Comparison
	var err error
	if jobs > 1 {
		results, err = compareInChildren(ctx, scenarios, rounds, jobs)
	} else {
		results = make([]*record.Comparison, len(scenarios))
		for i, sc := range scenarios {
			if results[i], err = compareRounds(ctx, sc, rounds); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
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
	met := writeTable(os.Stdout, results)
	if random {
		met = writeDistribution(os.Stdout, results)
	}
	if !met && check {
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

// loadScenarios reads each argument as a built-in scenario's name, or as
// a scenario file when it names a file (a snapshot of a cluster
// included); none means every built-in scenario.
func loadScenarios(args []string) ([]*scenario.Scenario, error) {
	if len(args) == 0 {
		args = scenario.BuiltinNames()
	}
	out := make([]*scenario.Scenario, 0, len(args))
	for _, arg := range args {
		var sc *scenario.Scenario
		var err error
		if _, statErr := os.Stat(arg); statErr == nil {
			sc, err = scenario.Load(arg)
		} else {
			sc, err = scenario.Builtin(arg)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// sameRuns reports how two comparisons of one scenario differ, nil when
// their runs have the same digests.
func sameRuns(a, b *record.Comparison) error {
	for _, pair := range []struct {
		stack string
		a, b  *record.Result
	}{{"default", a.Default, b.Default}, {"ballast", a.Ballast, b.Ballast}} {
		if da, db := pair.a.Digest(), pair.b.Digest(); da != db {
			return fmt.Errorf("the %s run gave %s, then %s: %s", pair.stack, da, db, record.FirstDifference(pair.a, pair.b))
		}
	}
	return nil
}

// writeTable prints the comparison table, where the pods ended and each
// run's digest, and reports whether every scenario met its target.
func writeTable(out io.Writer, results []*record.Comparison) bool {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tNODES\tSPREAD ORACLE (BOUND)\tSPREAD DEF\tSPREAD PEER\tSPREAD BAL\tBAL−ORACLE\tBAL/DEF\tBAL/BEST\tHOTTEST DEF\tHOTTEST PEER\tHOTTEST BAL\tEVICT PEER\tEVICT BAL (HOT/NEEDED)\tEVICT/PT PEER\tEVICT/PT BAL\tHOT CYCLES\tLOOPS\tRE-MOVES\tTARGET\tMET")
	allMet := true
	for _, c := range results {
		d, b := c.Default.Summary, c.Ballast.Summary
		target, met := simreport.Target(c)
		allMet = allMet && met
		peerSpread, peerHottest, peerEvictions, peerPerPoint := "-", "-", "-", "-"
		if p := c.Peer; p != nil {
			peerSpread = fmt.Sprintf("%.1f", p.Summary.Spread)
			peerHottest = fmt.Sprintf("%s %.0f%%", p.Summary.Hottest, p.Summary.HottestUtilisation)
			peerEvictions = fmt.Sprint(p.Evictions)
			peerPerPoint = record.FormatPerPoint(c.EvictionsPerPoint(p))
		}
		o := c.Oracle
		bound := "-"
		if o.Bound != nil {
			bound = fmt.Sprintf("%.1f", *o.Bound)
		}
		r := c.Ballast
		fmt.Fprintf(w, "%s\t%d\t%.1f (%s)\t%.1f\t%s\t%.1f\t%+.1f\t%.2f\t%.2f\t%s %.0f%%\t%s\t%s %.0f%%\t%s\t%d (%d/%d)\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", c.Scenario,
			len(b.Final), o.Spread, bound, d.Spread, peerSpread, b.Spread, b.Spread-o.Spread, c.SpreadRatio(), c.BestPeerRatio(),
			d.Hottest, d.HottestUtilisation, peerHottest, b.Hottest, b.HottestUtilisation, peerEvictions,
			r.Evictions, r.HotEvictions, r.NeededEvictions, peerPerPoint, record.FormatPerPoint(c.EvictionsPerPoint(r)), r.HotCycles, r.Loops, r.ReMoves, target, yesNo(met))
	}
	_ = w.Flush()
	fmt.Fprintln(out, "ORACLE is the best placement found knowing every pod's usage in advance, over the same window (the last quarter of")
	fmt.Fprintln(out, "the run); BOUND is the spread no placement goes under. BAL/DEF is Ballast's spread over the default scheduler's,")
	fmt.Fprintln(out, "BAL/BEST over the best other stack's (the lower of default and peer). EVICT/PT is evictions per point of spread")
	fmt.Fprintln(out, "removed against the default scheduler's (- none evicted, ∞ none removed).")
	fmt.Fprintln(out)
	for _, c := range results {
		fmt.Fprintf(out, "%s, pods at the end — default: %s\n", c.Scenario, simreport.FinalPlacement(c.Default))
		hog := fmt.Sprintf("default %d", c.Default.PlacedOnHog)
		if c.Peer != nil {
			fmt.Fprintf(out, "  peer: %s (loops %d, re-moves %d)\n", simreport.FinalPlacement(c.Peer), c.Peer.Loops, c.Peer.ReMoves)
			hog += fmt.Sprintf(", peer %d", c.Peer.PlacedOnHog)
		}
		fmt.Fprintf(out, "  ballast: %s; pods placed on a hogged node: %s, ballast %d\n", simreport.FinalPlacement(c.Ballast), hog, c.Ballast.PlacedOnHog)
		fmt.Fprintf(out, "  oracle: %s\n", oraclePlacement(c.Oracle))
		fmt.Fprintf(out, "  digests: default %s, ballast %s (the peer runs in real time and has none)\n", c.Default.Digest(), c.Ballast.Digest())
	}
	return allMet
}

// oraclePlacement describes the oracle's placement as FinalPlacement does a run's.
func oraclePlacement(o *oracle.Result) string {
	r := &record.Result{}
	for _, node := range slices.Sorted(maps.Keys(o.Placement)) {
		r.Summary.Final = append(r.Summary.Final, record.NodeStep{Node: node, Workloads: o.Placement[node]})
	}
	return simreport.FinalPlacement(r)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
