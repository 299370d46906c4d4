package lane

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/ballast-sched/ballast/e2e/pkg/nodeinit"
)

// process is a daemon the lane runs on the host, its output in a log file.
type process struct {
	name, log, path string
	env, args       []string
	// ownMounts starts it in a mount namespace of its own, ownHostname in a
	// UTS namespace of its own (where it may set its host name).
	ownMounts, ownHostname bool
	cmd                    *exec.Cmd
	done                   chan struct{}
	err                    error
}

// startProcess starts path with args; env, when not nil, replaces the
// inherited environment.
//
// The process goes into the lane's control-plane cgroup, so a later run
// finds and kills it if this one dies without stopping it.
func startProcess(name, log, path string, env []string, args ...string) (*process, error) {
	return (&process{name: name, log: log, path: path, env: env, args: args}).start()
}

// start starts the process p describes, which must not have run, and
// returns it.
func (p *process) start() (*process, error) {
	name := p.name
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s's log: %w", name, err)
	}
	defer f.Close()
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = p.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if p.ownMounts {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNS
	}
	if p.ownHostname {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUTS
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if err := nodeinit.AddToCgroup(controlPlaneCgroup, cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("placing %s in the lane's cgroup: %w", name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, fmt.Errorf("%s exited (%v); see %s", p.name, p.err, p.log)
	default:
		return false, nil
	}
}

// stop sends SIGTERM, waits up to grace, then kills.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// again starts a new process like p (same binary, arguments, environment,
// namespaces and log); p must have ended.
func (p *process) again() (*process, error) {
	return (&process{name: p.name, log: p.log, path: p.path, env: p.env, args: p.args,
		ownMounts: p.ownMounts, ownHostname: p.ownHostname}).start()
}
