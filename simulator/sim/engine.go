package sim

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
	"github.com/ballast-sched/ballast/simulator/scenario"
)

// Mode says which scheduling stack a run uses.
type Mode string

const (
	// ModeDefault runs the upstream kube-scheduler alone.
	ModeDefault Mode = "default"
	// ModeBallast runs ballast-scheduler's shipped profile as the default
	// scheduler, fed by load-watcher, and the shipped descheduler policy.
	ModeBallast Mode = "ballast"
	// ModeNone runs no scheduler: pods wait for an external one. Only a
	// served cluster offers it.
	ModeNone Mode = "none"
	// ModePeer is the upstream load-aware setup Ballast is compared with:
	// scheduler-plugins' Trimaran in its own kube-scheduler process and the
	// upstream descheduler's LowNodeUtilization on metrics.k8s.io. Only
	// RunPeer runs it, on a served cluster.
	ModePeer Mode = "peer"
)

// workloadLabel marks every pod with the scenario workload it belongs to.
const workloadLabel = "sim.ballast-sched.io/workload"

// Options tune a run.
type Options struct {
	// DeschedulerEvery is the simulated time between descheduling cycles
	// in Ballast mode; default 5m, the chart's descheduler.deschedulingInterval.
	DeschedulerEvery time.Duration
	// SettleTimeout bounds the real time waited after each step for the
	// cluster to settle; default 20s.
	SettleTimeout time.Duration
	// SchedulerConfig is the Ballast run's KubeSchedulerConfiguration;
	// default the shipped scheduler/config/default-scheduler.yaml.
	SchedulerConfig string
	// DeschedulerPolicy is the Ballast run's DeschedulerPolicy; default the
	// shipped descheduler/config/policy.yaml.
	DeschedulerPolicy string
	// Progress receives a line every five simulated minutes when set.
	Progress io.Writer
	// Configuration names where SchedulerConfig and DeschedulerPolicy came
	// from, for the output; default shipped, or files when either is set.
	Configuration Configuration
	// Windows are the statistics windows load-watcher keeps; every window a
	// plugin reads must be one of them. Default usage.DefaultWindows.
	Windows []usage.Window
}

func (o *Options) setDefaults() {
	if o.DeschedulerEvery <= 0 {
		o.DeschedulerEvery = 5 * time.Minute
	}
	if o.SchedulerConfig == "" {
		o.SchedulerConfig = schedulerConfig
	}
	if o.DeschedulerPolicy == "" {
		o.DeschedulerPolicy = deschedulerPolicy
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 20 * time.Second
	}
}

// engine is one run of one scenario in one mode on a simulated clock.
type engine struct {
	*stack
	mode  Mode
	opts  Options
	clock *simClock
	rec   *recorder
	// hot follows the nodes over thresholds from one descheduling cycle to
	// the next; nil without a descheduler.
	hot *hotTracker
}

// Run runs sc in mode on a fresh in-process cluster and returns what
// happened at every step.
func Run(ctx context.Context, sc *scenario.Scenario, mode Mode, opts Options) (*Result, error) {
	if mode != ModeDefault && mode != ModeBallast {
		return nil, fmt.Errorf("unknown mode %q (want %s or %s)", mode, ModeDefault, ModeBallast)
	}
	opts.setDefaults()
	clock := newSimClock(time.Now().Truncate(time.Second))
	s, err := startStack(ctx, sc, stackConfig{
		scheduler: mode, descheduler: mode == ModeBallast, schedulerConfig: opts.SchedulerConfig,
		deschedulerPolicy: opts.DeschedulerPolicy, clock: clock, period: sc.Step.Duration, windows: opts.Windows,
	})
	if err != nil {
		return nil, err
	}
	defer s.close()
	e := &engine{stack: s, mode: mode, opts: opts, clock: clock, rec: newRecorder(s, mode)}
	if s.descheduler != nil {
		high, err := s.descheduler.highThresholds()
		if err != nil {
			return nil, err
		}
		e.hot = newHotTracker(high)
	}
	if err := e.loop(ctx); err != nil {
		return nil, err
	}
	if err := s.err(); err != nil {
		return nil, err
	}
	return e.rec.finish(), nil
}

// loop runs every step: usage is published and sampled, the timeline's
// events applied, the cluster left to settle, the descheduler run when due,
// and the nodes recorded.
func (e *engine) loop(ctx context.Context) error {
	step := e.sc.Step.Duration
	steps := int64(e.sc.Duration.Duration / step)
	every := max(int64(e.opts.DeschedulerEvery/step), 1)
	events := newTimeline(e.sc)
	for i := int64(0); i <= steps; i++ {
		t := time.Duration(i) * step
		e.clock.set(e.start.Add(t))
		if i > 0 {
			if err := e.publishAndCollect(ctx, t, i); err != nil {
				return err
			}
		} else if err := e.createWorkloads(ctx); err != nil {
			return err
		}
		if err := e.applyDue(ctx, events, t); err != nil {
			return err
		}
		if err := e.settle(ctx, false); err != nil {
			return err
		}
		if e.descheduler != nil && i > 0 && i%every == 0 {
			if err := e.deschedule(ctx, t, i); err != nil {
				return err
			}
		}
		rec, err := e.recordStep(ctx, t, i)
		if err != nil {
			return err
		}
		e.rec.addStep(rec)
		if e.opts.Progress != nil && t%(5*time.Minute) == 0 && t > 0 {
			fmt.Fprintf(e.opts.Progress, "  %s: %s/%s simulated\n", e.mode, t, e.sc.Duration.Duration)
		}
	}
	return nil
}

// deschedule runs one descheduling cycle, noting first which nodes are hot
// and how few evictions would cool them, then how many pods
// LoadAwareBalance evicted.
func (e *engine) deschedule(ctx context.Context, t time.Duration, step int64) error {
	states, _, err := e.nodeStates(ctx, t, step)
	if err != nil {
		return err
	}
	e.hot.observe(states, e.rec.result)
	before, err := e.descheduler.hotEvictions()
	if err != nil {
		return err
	}
	if err := e.descheduler.cycle(ctx); err != nil {
		return err
	}
	if err := e.settle(ctx, true); err != nil {
		return err
	}
	after, err := e.descheduler.hotEvictions()
	if err != nil {
		return err
	}
	e.rec.result.HotEvictions += after - before
	return nil
}
