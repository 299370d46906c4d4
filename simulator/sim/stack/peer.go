package stack

import (
	"bytes"
	"context"
	_ "embed"
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

// peerSchedulerConfig is the upstream load-aware peer's
// KubeSchedulerConfiguration for scheduler-plugins' Trimaran, a template of
// the kubeconfig and load-watcher's address (peerSchedulerValues).
//
//go:embed profiles/peer-scheduler.yaml
var peerSchedulerConfig string

// peerSchedulerValues fill peerSchedulerConfig.
type peerSchedulerValues struct {
	Kubeconfig, LoadWatcher string
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
