package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// TrimaranPoll is how often scheduler-plugins' Trimaran plugins fetch
// usage from load-watcher, in real time: metricsUpdateIntervalSeconds in
// pkg/trimaran/collector.go of the scheduler-plugins release peers/trimaran
// builds. It is not configurable.
const TrimaranPoll = 30 * time.Second

// PeerSchedulerEnv names the environment variable that gives the upstream
// load-aware peer's kube-scheduler binary (`make peers-bins`).
const PeerSchedulerEnv = "BALLAST_PEER_SCHEDULER"

// peerSchedulerPath is where `make peers-bins` puts the binary, relative to
// the repository's root.
var peerSchedulerPath = filepath.Join("_output", "peers", "bin", "trimaran-scheduler")

// ErrNoPeerScheduler says the peer's kube-scheduler binary was not found.
var ErrNoPeerScheduler = errors.New("no upstream peer scheduler: run `make peers-bins` or set " + PeerSchedulerEnv)

// FindPeerScheduler returns the upstream load-aware peer's kube-scheduler:
// $BALLAST_PEER_SCHEDULER when set, else _output/peers/bin/trimaran-scheduler
// in the working directory or the nearest parent that has one.
func FindPeerScheduler() (string, error) {
	if p := os.Getenv(PeerSchedulerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", PeerSchedulerEnv, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, peerSchedulerPath)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoPeerScheduler
		}
		dir = parent
	}
}

// PeerSpeed is the speed a peer run serves a scenario of this step at: one
// Trimaran poll per scenario step. Ballast's scheduler reads load-watcher's
// collector, which samples once per step, so it sees each step's usage;
// Trimaran sees only what it fetched at its last poll, every TrimaranPoll
// of real time. At step/TrimaranPoll (0.5 for 15 s steps) Trimaran fetches
// once per step as well, and its view is never more than a step older
// than Ballast's; any faster and it would skip steps.
func PeerSpeed(step time.Duration) float64 { return float64(step) / float64(TrimaranPoll) }

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

// peerSchedulerValues fill peerSchedulerConfig.
type peerSchedulerValues struct {
	Kubeconfig, LoadWatcher string
}

// RunPeer runs sc with the upstream load-aware peer: a served cluster
// without a scheduler of its own, scheduler-plugins' Trimaran kube-scheduler
// as a separate process reading the served load-watcher, and the upstream
// descheduler's LowNodeUtilization on metrics.k8s.io in-process every
// DeschedulerEvery. It takes the scenario's duration over the speed in real
// time, and returns the same record as Run.
func RunPeer(ctx context.Context, sc *scenario.Scenario, opts PeerOptions) (_ *Result, err error) {
	if opts.Scheduler == "" {
		return nil, ErrNoPeerScheduler
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
		Scheduler: ModeNone, Descheduler: true, DeschedulerPolicy: peerDeschedulerPolicy,
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
	sched, err := StartPeerScheduler(ctx, opts.Scheduler, dir, srv.KubeconfigPath, srv.LoadWatcher, opts.Log)
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

// PeerScheduler is the peer's kube-scheduler process.
type PeerScheduler struct {
	cmd    *exec.Cmd
	log    *tailBuffer
	exited chan struct{}
	err    error
	once   sync.Once
}

// StartPeerScheduler starts binary, the peer's kube-scheduler (see
// FindPeerScheduler), on the peer's configuration for the cluster of
// kubeconfig and the load-watcher at loadWatcher (its base URL), without
// serving HTTPS. The configuration is written into dir; the process's
// output goes to log when it is not nil.
func StartPeerScheduler(ctx context.Context, binary, dir, kubeconfig, loadWatcher string, log io.Writer) (*PeerScheduler, error) {
	var cfg bytes.Buffer
	values := peerSchedulerValues{Kubeconfig: kubeconfig, LoadWatcher: loadWatcher}
	if err := template.Must(template.New("peer-scheduler").Parse(peerSchedulerConfig)).Execute(&cfg, values); err != nil {
		return nil, fmt.Errorf("the peer scheduler's configuration: %w", err)
	}
	path := filepath.Join(dir, "scheduler.yaml")
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("writing the peer scheduler's configuration: %w", err)
	}
	if log == nil {
		log = io.Discard
	}
	p := &PeerScheduler{log: &tailBuffer{max: 4 << 10}, exited: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, binary, "--config", path, "--secure-port", "0")
	out := io.MultiWriter(p.log, log)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the peer scheduler %s: %w", binary, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed when the process has ended.
func (p *PeerScheduler) Exited() <-chan struct{} { return p.exited }

// Err says how the process ended, with the end of its output; call it once
// Exited is closed.
func (p *PeerScheduler) Err() error {
	return fmt.Errorf("the peer scheduler exited: %v%s", p.err, p.logTail())
}

// Stop ends the process, asking first, and waits for it.
func (p *PeerScheduler) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// logTail is the end of the process's output, for an error message.
func (p *PeerScheduler) logTail() string {
	s := strings.TrimSpace(p.log.String())
	if s == "" {
		return ""
	}
	return "; its last output:\n" + s
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

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
