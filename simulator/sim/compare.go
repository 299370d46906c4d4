package sim

import (
	"context"
	"fmt"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// Compare runs sc in both modes, default first.
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
	return out, nil
}
