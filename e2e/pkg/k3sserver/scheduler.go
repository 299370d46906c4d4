package k3sserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/installer/pkg/atomicfile"
)

// Where k3s keeps its embedded scheduler's credential and serving
// certificate, below DataDir.
const (
	SchedulerKubeconfig = DataDir + "/server/cred/scheduler.kubeconfig"
	SchedulerCert       = DataDir + "/server/tls/kube-scheduler/kube-scheduler.crt"
	SchedulerKey        = DataDir + "/server/tls/kube-scheduler/kube-scheduler.key"
	// SchedulerPort is the port k3s's scheduler serves health and metrics on.
	SchedulerPort = 10259
)

// SchedulerArgs are the arguments k3s starts its embedded kube-scheduler
// with (k3s's daemons/control scheduler()): its defaults, then every
// --kube-scheduler-arg, merged as ComponentArgs does.
func SchedulerArgs(extra []string) []string {
	return ComponentArgs(map[string]string{
		"kubeconfig":                SchedulerKubeconfig,
		"authorization-kubeconfig":  SchedulerKubeconfig,
		"authentication-kubeconfig": SchedulerKubeconfig,
		"bind-address":              "127.0.0.1",
		"secure-port":               fmt.Sprint(SchedulerPort),
		"tls-cert-file":             SchedulerCert,
		"tls-private-key-file":      SchedulerKey,
		"profiling":                 "false",
	}, extra)
}

// scheduler is the kube-scheduler process the server runs.
type scheduler struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startScheduler runs binary with args, its output appended to log, and
// waits until it answers /healthz on SchedulerPort with a certificate of ca.
func startScheduler(ctx context.Context, binary, log, ca string, args []string) (*scheduler, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the scheduler's log: %w", err)
	}
	defer f.Close()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	klog.FromContext(ctx).Info("Starting kube-scheduler", "args", args)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-scheduler: %w", err)
	}
	s := &scheduler{cmd: cmd, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitHealthy(ctx, ca); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w (see %s)", err, log)
	}
	return s, nil
}

func (s *scheduler) waitHealthy(ctx context.Context, caFile string) error {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("reading the cluster CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("no certificate in %s", caFile)
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", SchedulerPort)
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-s.done:
			return false, fmt.Errorf("kube-scheduler exited: %v", s.err)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// stop ends kube-scheduler as a service manager would: SIGTERM, then SIGKILL
// after ten seconds.
func (s *scheduler) stop() {
	if s == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// exited reports whether kube-scheduler ended on its own.
func (s *scheduler) exited() error {
	select {
	case <-s.done:
		if s.err == nil {
			return errors.New("kube-scheduler exited")
		}
		return fmt.Errorf("kube-scheduler exited: %w", s.err)
	default:
		return nil
	}
}

// copyFile copies src to dst with mode perm from the first byte, atomically.
func copyFile(src, dst string, perm os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	_, err = atomicfile.Write(dst, data, perm)
	return err
}
