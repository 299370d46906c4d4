package sim

import (
	"context"
	"fmt"

	"github.com/ballast-sched/ballast/simulator/sim/oracle"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// Compare runs sc in both modes, default first, and finds the best placement
// possible for it (the oracle). An oracle that cannot be found leaves the
// comparison without one and says why in Progress.
func Compare(ctx context.Context, sc *scenario.Scenario, opts Options) (*record.Comparison, error) {
	out := &record.Comparison{Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, Target: sc.Target, Configuration: opts.configuration()}
	for _, m := range []Mode{ModeDefault, ModeBallast} {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "Running %s with the %s stack…\n", sc.Name, m)
		}
		r, err := Run(ctx, sc, m, opts)
		if err != nil {
			return nil, fmt.Errorf("%s run of %s: %w", m, sc.Name, err)
		}
		if m == ModeDefault {
			out.Default = r
		} else {
			out.Ballast = r
		}
	}
	o, err := oracle.Solve(sc)
	if err != nil {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "No oracle for %s: %v\n", sc.Name, err)
		}
		return out, nil
	}
	out.Oracle = o
	return out, nil
}
