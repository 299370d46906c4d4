package sim

import (
	"context"
	"fmt"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// Comparison is one scenario run with the default scheduler and with Ballast.
type Comparison struct {
	Scenario    string  `json:"scenario"`
	Description string  `json:"description,omitempty"`
	Seed        int64   `json:"seed"`
	Default     *Result `json:"default"`
	Ballast     *Result `json:"ballast"`
	// Target is what Ballast is expected to achieve; nil for a scenario
	// without one.
	Target *scenario.Target `json:"target,omitempty"`

	// Configuration is what the Ballast run was configured with.
	Configuration Configuration `json:"configuration"`
}

// SpreadRatio is Ballast's utilisation spread over the default scheduler's;
// below 1 means Ballast balanced better. Zero when the default spread is.
func (c *Comparison) SpreadRatio() float64 {
	if c.Default.Summary.Spread == 0 {
		return 0
	}
	return c.Ballast.Summary.Spread / c.Default.Summary.Spread
}

// Compare runs sc in both modes, default first.
func Compare(ctx context.Context, sc *scenario.Scenario, opts Options) (*Comparison, error) {
	out := &Comparison{Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, Target: sc.Target, Configuration: opts.configuration()}
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
