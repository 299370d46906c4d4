package nodeinit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"
)

const (
	defaultReadyTimeout = time.Minute
	// stopGrace is how long a daemon may take to exit after SIGTERM.
	stopGrace = 10 * time.Second
	// killTimeout bounds the final sweep of the node's cgroups.
	killTimeout = 15 * time.Second
)

// running is a started daemon and the result of its Wait.
type running struct {
	Process
	cmd  *exec.Cmd
	done chan error
}

// Run is ballast-node inside the node's namespaces: it remounts the cgroup
// hierarchies, starts spec's processes in order, creates spec.ReadyFile, and
// supervises them until SIGTERM or SIGINT, or until one exits. Then it stops
// them in reverse order and kills whatever is left in the node's cgroups
// (container shims and containers included). It returns an error if a
// process failed to start, to become ready, or exited on its own.
func Run(spec Spec) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := remountCgroups(); err != nil {
		return err
	}
	if err := evacuate(); err != nil {
		return err
	}
	for _, d := range spec.PrivateDirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		if err := syscall.Mount("tmpfs", d, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755"); err != nil {
			return fmt.Errorf("mounting a private tmpfs on %s: %w", d, err)
		}
	}
	var procs []*running
	runErr := func() error {
		for _, p := range spec.Processes {
			r, err := start(p)
			if err != nil {
				return err
			}
			procs = append(procs, r)
			if err := r.waitReady(ctx); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "ballast-node: %s is ready\n", p.Name)
		}
		if err := os.WriteFile(spec.ReadyFile, nil, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", spec.ReadyFile, err)
		}
		return supervise(ctx, procs)
	}()
	for _, r := range slices.Backward(procs) {
		r.stop()
	}
	if err := KillCgroup("/", killTimeout); err != nil {
		runErr = errors.Join(runErr, err)
	}
	return runErr
}

func start(p Process) (*running, error) {
	log, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s's log: %w", p.Name, err)
	}
	defer log.Close()
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Daemons must not take the supervisor's signals from the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.Name, err)
	}
	r := &running{Process: p, cmd: cmd, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	return r, nil
}

// waitReady polls the process's readiness until it holds, the process exits,
// or its timeout passes.
func (r *running) waitReady(ctx context.Context) error {
	timeout := r.ReadyTimeout.Duration
	if timeout <= 0 {
		timeout = defaultReadyTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if r.ready() {
			return nil
		}
		select {
		case err := <-r.done:
			r.done <- err
			return fmt.Errorf("%s exited before it was ready (%v); see %s", r.Name, err, r.Log)
		case <-deadline.C:
			return fmt.Errorf("%s not ready after %s; see %s", r.Name, timeout, r.Log)
		case <-ctx.Done():
			return fmt.Errorf("stopped while waiting for %s", r.Name)
		case <-tick.C:
		}
	}
}

func (r *running) ready() bool {
	switch {
	case r.ReadyFile != "":
		_, err := os.Stat(r.ReadyFile)
		return err == nil
	case r.ReadyURL != "":
		c := http.Client{Timeout: time.Second}
		resp, err := c.Get(r.ReadyURL)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	default:
		return true
	}
}

// supervise waits for a stop signal or for a daemon to exit, which is the
// node failing.
func supervise(ctx context.Context, procs []*running) error {
	exited := make(chan error, len(procs))
	for _, r := range procs {
		go func() {
			err := <-r.done
			r.done <- err
			exited <- fmt.Errorf("%s exited (%v); see %s", r.Name, err, r.Log)
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-exited:
		return err
	}
}

// stop sends SIGTERM and waits up to stopGrace; the cgroup sweep after it
// kills what did not exit.
func (r *running) stop() {
	select {
	case err := <-r.done:
		r.done <- err
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		r.done <- err
	case <-time.After(stopGrace):
		_ = r.cmd.Process.Kill()
	}
}
