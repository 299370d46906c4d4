package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// compareRounds runs sc rounds times on the default and Ballast stacks and
// returns the first comparison; every round must give the same digests.
func compareRounds(ctx context.Context, sc *scenario.Scenario, rounds int) (*record.Comparison, error) {
	var first *record.Comparison
	for r := range rounds {
		fmt.Fprintf(os.Stderr, "%s (seed %d, %s), round %d of %d…\n", sc.Name, sc.Seed, sc.Duration.Duration, r+1, rounds)
		start := time.Now()
		c, err := sim.Compare(ctx, sc, sim.Options{})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "%s: default %s, ballast %s in %s\n", sc.Name, c.Default.Digest(), c.Ballast.Digest(), time.Since(start).Round(time.Second))
		if first == nil {
			first = c
			continue
		}
		if err := sameRuns(first, c); err != nil {
			return nil, fmt.Errorf("%s is not repeatable: round %d: %w", sc.Name, r+1, err)
		}
	}
	if first.Oracle == nil {
		return nil, fmt.Errorf("%s: no oracle", sc.Name)
	}
	return first, nil
}

// compareOne runs the scenario in file (-one) and writes its comparison to
// out as JSON.
func compareOne(ctx context.Context, file string, rounds int, out io.Writer) error {
	sc, err := scenario.Load(file)
	if err != nil {
		return err
	}
	c, err := compareRounds(ctx, sc, rounds)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(c)
}

// compareInChildren runs each scenario in a process of its own (this
// binary with -one), jobs at a time, and returns their comparisons in the
// scenarios' order. Processes, not goroutines: each simulation runs a
// control plane whose parts keep process-wide state (metrics registries,
// configz), and a simulation's result depends on nothing but its scenario,
// so it is the same in any process beside any other.
func compareInChildren(ctx context.Context, scenarios []*scenario.Scenario, rounds, jobs int) ([]*record.Comparison, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding bench-balance's binary for -jobs: %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-balance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]*record.Comparison, len(scenarios))
	errs := make([]error, len(scenarios))
	slots := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		file := filepath.Join(dir, strconv.Itoa(i)+".yaml")
		if err := scenario.Save(file, sc); err != nil {
			return nil, err
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			var stdout bytes.Buffer
			cmd := exec.CommandContext(ctx, self, "-one", file, "-rounds", strconv.Itoa(rounds))
			cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("%s: %w", sc.Name, err)
				cancel()
				return
			}
			var c record.Comparison
			if err := json.Unmarshal(stdout.Bytes(), &c); err != nil {
				errs[i] = fmt.Errorf("%s: reading its comparison: %w", sc.Name, err)
				cancel()
				return
			}
			results[i] = &c
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}
