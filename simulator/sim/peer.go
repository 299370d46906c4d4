package sim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
	"github.com/ballast-sched/ballast/simulator/sim/stack"
)

// PeerSpeed is the speed a peer run serves a scenario of this step at: one
// Trimaran poll per scenario step. Ballast's scheduler reads load-watcher's
// collector, which samples once per step, so it sees each step's usage;
// Trimaran sees only what it fetched at its last poll, every TrimaranPoll
// of real time. At step/TrimaranPoll (0.5 for 15 s steps) Trimaran fetches
// once per step as well, and its view is never more than a step older
// than Ballast's; any faster and it would skip steps.
func PeerSpeed(step time.Duration) float64 { return float64(step) / float64(stack.TrimaranPoll) }

// PeerOptions tune a peer run.
type PeerOptions struct {
	// Scheduler is the peer's kube-scheduler binary; required (see
	// FindPeerScheduler).
	Scheduler string
	// Speed is how much faster than the real clock the scenario runs;
	// default PeerSpeed of the scenario's step.
	Speed float64
	// DeschedulerEvery is the scenario time between descheduling cycles;
	// default 5m, as in the other runs.
	DeschedulerEvery time.Duration
	// Log receives the peer scheduler's output and the served cluster's
	// problems when set; RunPeer serialises the writes.
	Log io.Writer
	// Progress receives a line every five scenario minutes when set.
	Progress io.Writer
}

// RunPeer runs sc with the upstream load-aware peer: a served cluster
// without a scheduler of its own, scheduler-plugins' Trimaran kube-scheduler
// as a separate process reading the served load-watcher, and the upstream
// descheduler's LowNodeUtilization on metrics.k8s.io in-process every
// DeschedulerEvery. It takes the scenario's duration over the speed in real
// time, and returns the same record as Run.
func RunPeer(ctx context.Context, sc *scenario.Scenario, opts PeerOptions) (_ *record.Result, err error) {
	if opts.Scheduler == "" {
		return nil, stack.ErrNoPeerScheduler
	}
	if opts.Speed <= 0 {
		opts.Speed = PeerSpeed(sc.Step.Duration)
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	// The scheduler's output and the served cluster's lines share the log.
	opts.Log = &lockedWriter{w: opts.Log}
	dir, err := os.MkdirTemp("", "ballast-peer-")
	if err != nil {
		return nil, fmt.Errorf("creating the peer's directory: %w", err)
	}
	defer os.RemoveAll(dir)
	srv, err := Serve(ctx, sc, ServeOptions{
		Scheduler: ModeNone, Descheduler: true, DeschedulerPolicy: stack.PeerDeschedulerPolicy,
		DeschedulerEvery: opts.DeschedulerEvery, Speed: opts.Speed, Record: true,
		KubeconfigOut: filepath.Join(dir, "kubeconfig"), Log: opts.Log,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if _, shutErr := srv.Shutdown(context.Background()); err == nil && shutErr != nil {
			err = shutErr
		}
	}()
	sched, err := stack.StartPeerScheduler(ctx, opts.Scheduler, dir, srv.KubeconfigPath, srv.LoadWatcher, opts.Log)
	if err != nil {
		return nil, err
	}
	defer sched.Stop()
	progress := time.NewTicker(time.Duration(float64(5*time.Minute) / opts.Speed))
	defer progress.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-sched.Exited():
			return nil, sched.Err()
		case <-srv.Recorded():
			done = true
		case <-progress.C:
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "  %s: %s/%s served\n", ModePeer, srv.scenarioTime().Truncate(time.Second), sc.Duration.Duration)
			}
		}
	}
	sched.Stop()
	if _, err := srv.Shutdown(ctx); err != nil {
		return nil, err
	}
	r := srv.Result()
	r.Mode = ModePeer
	return r, nil
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
