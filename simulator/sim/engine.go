package sim

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
	"github.com/ballast-sched/ballast/simulator/sim/record"
	"github.com/ballast-sched/ballast/simulator/sim/stack"
)

// Mode says which scheduling stack a run uses (model.Mode).
type Mode = model.Mode

// The modes a run or a served cluster may use.
const (
	ModeDefault = model.ModeDefault
	ModeBallast = model.ModeBallast
	ModeNone    = model.ModeNone
	ModePeer    = model.ModePeer
)

// Options tune a run.
type Options struct {
	// DeschedulerEvery is the simulated time between descheduling cycles
	// in Ballast mode; default 5m, the chart's descheduler.deschedulingInterval.
	DeschedulerEvery time.Duration
	// SettleTimeout bounds the real time waited for the cluster to come to
	// rest after a step, a wait that only a stuck part exhausts; default 2m.
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
	Configuration record.Configuration
	// Windows are the statistics windows load-watcher keeps; every window a
	// plugin reads must be one of them. Default usage.DefaultWindows.
	Windows []usage.Window
}

func (o *Options) setDefaults() {
	if o.DeschedulerEvery <= 0 {
		o.DeschedulerEvery = 5 * time.Minute
	}
	if o.SchedulerConfig == "" {
		o.SchedulerConfig = stack.SchedulerConfig
	}
	if o.DeschedulerPolicy == "" {
		o.DeschedulerPolicy = stack.DeschedulerPolicy
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 2 * time.Minute
	}
}

// configuration is opts' Configuration, or the one its configuration
// fields imply when it was not set.
func (o *Options) configuration() record.Configuration {
	switch {
	case o.Configuration.Source != "":
		return o.Configuration
	case o.SchedulerConfig == "" && o.DeschedulerPolicy == "":
		return record.Configuration{Source: record.ConfigShipped}
	default:
		return record.Configuration{Source: record.ConfigFiles}
	}
}

// engine is one run of one scenario in one mode on a simulated clock.
type engine struct {
	*stack.Stack
	mode  Mode
	opts  Options
	clock *model.Clock
	rec   *record.Recorder
	// hot follows the nodes over thresholds from one descheduling cycle to
	// the next; nil without a descheduler.
	hot *record.HotTracker
}

// Run runs sc in mode on a fresh in-process cluster and returns what
// happened at every step.
func Run(ctx context.Context, sc *scenario.Scenario, mode Mode, opts Options) (*record.Result, error) {
	if mode != ModeDefault && mode != ModeBallast {
		return nil, fmt.Errorf("unknown mode %q (want %s or %s)", mode, ModeDefault, ModeBallast)
	}
	opts.setDefaults()
	thresholds, err := schedulerThresholds(opts.SchedulerConfig)
	if err != nil {
		return nil, err
	}
	clock := model.NewClock(time.Now().Truncate(time.Second))
	s, err := stack.Start(ctx, sc, stack.Config{
		Scheduler: mode, Descheduler: mode == ModeBallast, SchedulerConfig: opts.SchedulerConfig,
		DeschedulerPolicy: opts.DeschedulerPolicy, Clock: clock, Period: sc.Step.Duration, Windows: opts.Windows,
		Stepped: true,
	})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	e := &engine{Stack: s, mode: mode, opts: opts, clock: clock, rec: record.NewRecorder(s.Model(), sc, mode, thresholds)}
	if d := s.Descheduler(); d != nil {
		high, err := d.HighThresholds()
		if err != nil {
			return nil, err
		}
		e.hot = record.NewHotTracker(thresholds, high)
	}
	if err := e.loop(ctx); err != nil {
		return nil, err
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return e.rec.Finish(), nil
}

// loop runs every step: the Jobs' runs that are over ended and those due
// started, usage published and sampled, the timeline's events applied, the cluster left to settle, the descheduler run when due,
// and the nodes recorded.
func (e *engine) loop(ctx context.Context) error {
	sc := e.Scenario()
	step := sc.Step.Duration
	steps := int64(sc.Duration.Duration / step)
	every := max(int64(e.opts.DeschedulerEvery/step), 1)
	events := model.NewTimeline(sc)
	for i := int64(0); i <= steps; i++ {
		t := time.Duration(i) * step
		e.clock.Set(e.Started().Add(t))
		if i > 0 {
			// The runs over end first: a pod that ran its time uses
			// nothing from now on.
			if err := e.Runs(ctx, t); err != nil {
				return fmt.Errorf("jobs at %s: %w", t, err)
			}
			if err := e.PublishAndCollect(ctx, t, i); err != nil {
				return err
			}
		} else if err := e.CreateWorkloads(ctx); err != nil {
			return err
		}
		for _, ev := range events.Due(t) {
			if err := e.Apply(ctx, ev); err != nil {
				return fmt.Errorf("event %s at %s: %w", ev.Type, ev.At.Duration, err)
			}
		}
		if err := e.Outages(ctx, t); err != nil {
			return fmt.Errorf("outages at %s: %w", t, err)
		}
		if err := e.settle(ctx, false); err != nil {
			return err
		}
		if e.Descheduler() != nil && i > 0 && i%every == 0 {
			if err := e.deschedule(ctx, t, i); err != nil {
				return err
			}
		}
		if err := e.recordStep(ctx, t, i); err != nil {
			return err
		}
		if e.opts.Progress != nil && t%(5*time.Minute) == 0 && t > 0 {
			fmt.Fprintf(e.opts.Progress, "  %s: %s/%s simulated\n", e.mode, t, sc.Duration.Duration)
		}
	}
	return nil
}

// nodeStates is every node's state at step (scenario time t).
func (e *engine) nodeStates(ctx context.Context, t time.Duration, step int64) ([]record.NodeState, int, error) {
	nodes, err := e.Nodes(ctx)
	if err != nil {
		return nil, 0, err
	}
	pods, err := e.CurrentPods(ctx)
	if err != nil {
		return nil, 0, err
	}
	states, pending := record.NodeStates(nodes, pods, e.Model(), t, step)
	return states, pending, nil
}

// recordStep adds the cluster at step (scenario time t) to the record.
func (e *engine) recordStep(ctx context.Context, t time.Duration, step int64) error {
	states, pending, err := e.nodeStates(ctx, t, step)
	if err != nil {
		return err
	}
	e.rec.AddStep(record.StepOf(states, pending, t))
	return nil
}

// deschedule runs one descheduling cycle, noting first which nodes are hot
// and how few evictions would cool them, then where the moves planned the
// replacements and how many pods LoadAwareBalance evicted.
func (e *engine) deschedule(ctx context.Context, t time.Duration, step int64) error {
	states, _, err := e.nodeStates(ctx, t, step)
	if err != nil {
		return err
	}
	e.hot.Observe(states, e.rec.Result())
	d := e.Descheduler()
	before, err := d.HotEvictions()
	if err != nil {
		return err
	}
	if err := d.Cycle(ctx); err != nil {
		return err
	}
	moves, err := d.Moves(ctx)
	if err != nil {
		return err
	}
	tell(e.rec, moves)
	if err := e.settle(ctx, true); err != nil {
		return err
	}
	after, err := d.HotEvictions()
	if err != nil {
		return err
	}
	e.rec.Result().HotEvictions += after - before
	growing, err := d.GrowingPods()
	if err != nil || len(growing) == 0 {
		return err
	}
	pods, err := e.CurrentPods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if rate, ok := growing[p.Key.Name]; ok {
			e.rec.Result().NoteGrowing(p.Workload, rate)
		}
	}
	return nil
}

// tell hands rec what the descheduler kept of its moves: why each pod was
// moved and where its replacement was planned, by evicted pod.
func tell(rec *record.Recorder, moves []balance.Move) {
	why, planned := map[types.UID]string{}, map[types.UID]string{}
	for _, m := range moves {
		if m.Pod != "" {
			why[m.Pod], planned[m.Pod] = m.Why, m.Destination
		}
	}
	rec.Explain(why)
	rec.Plan(planned)
}
