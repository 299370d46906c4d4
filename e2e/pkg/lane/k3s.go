package lane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ballast-sched/ballast/e2e/pkg/k3sserver"
)

// k3sServer is the lane's k3s server: ballast-k3s in a view of the host of
// its own, which runs the cluster's kube-scheduler.
type k3sServer struct {
	view     k3sserver.HostView
	specFile string
	ready    string
	proc     *process
}

// startK3s lays out the k3s host's files, places the lane's images where k3s
// imports them and its addons where k3s applies them, and starts the server.
func (l *Lane) startK3s(ctx context.Context, cred *credentials) error {
	dir := filepath.Join(l.Dir, "k3s")
	s := &k3sServer{view: k3sserver.HostView{Dir: filepath.Join(dir, "host")}, specFile: filepath.Join(dir, "spec.json"),
		ready: filepath.Join(dir, "ready")}
	if err := s.view.Prepare(); err != nil {
		return err
	}
	// What k3s itself brings: its air-gap images and the manifests of its
	// bundled addons.
	for _, img := range l.opts.Images {
		if err := copyInto(img, s.view.Path(k3sserver.ImagesDir)); err != nil {
			return err
		}
	}
	for i, m := range l.opts.Addons {
		path := filepath.Join(s.view.Path(k3sserver.ManifestsDir), fmt.Sprintf("lane-addon-%d.yaml", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, m, 0o600); err != nil {
			return fmt.Errorf("placing an addon in the manifests directory: %w", err)
		}
	}
	n := l.nodes[0]
	spec := k3sserver.Spec{
		View:                s.view.Dir,
		AdminKubeconfig:     cred.admin,
		SchedulerKubeconfig: cred.scheduler,
		SchedulerCert:       cred.schedulerServing.CertFile,
		SchedulerKey:        cred.schedulerServing.KeyFile,
		CACert:              cred.ca.CertFile,
		KubeletClientCert:   filepath.Join(l.Dir, "pki", n.name+"-kubelet-client.crt"),
		KubeScheduler:       filepath.Join(l.opts.BinDir, "kube-scheduler"),
		SchedulerLog:        filepath.Join(l.Dir, "kube-scheduler.log"),
		Ctr:                 filepath.Join(l.opts.BinDir, "ctr"),
		ContainerdSocket:    n.socket,
		ReadyFile:           s.ready,
	}
	raw, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the k3s server's spec: %w", err)
	}
	if err := os.WriteFile(s.specFile, raw, 0o600); err != nil {
		return fmt.Errorf("writing the k3s server's spec: %w", err)
	}
	args := append([]string{"--spec", s.specFile, "--hostname", n.name, "server", "--node-name=" + n.name}, l.opts.K3sArgs...)
	// The server's host name is its node's, as k3s names a node after the
	// host: kube-scheduler's leader identity then names the node.
	p := &process{name: "k3s", log: filepath.Join(l.Dir, "k3s.log"), path: filepath.Join(l.opts.BinDir, "ballast-k3s"),
		args: args, ownMounts: true, ownHostname: true}
	if s.proc, err = p.start(); err != nil {
		return err
	}
	l.k3s = s
	return s.waitReady(ctx)
}

// waitReady waits for the server's ready file.
func (s *k3sServer) waitReady(ctx context.Context) error {
	return waitFor(ctx, "the k3s server", 3*time.Minute, func(context.Context) (bool, error) {
		if gone, err := s.proc.exited(); gone {
			return false, err
		}
		_, err := os.Stat(s.ready)
		return err == nil, nil
	})
}

// RestartK3s restarts the k3s server as `systemctl restart k3s` does: it
// reads its configuration and drop-ins again, records its arguments on the
// Node again and starts kube-scheduler with the arguments derived from
// them. It returns when the server runs again.
func (l *Lane) RestartK3s(ctx context.Context) error {
	if l.k3s == nil {
		return errors.New("the lane is not a k3s server")
	}
	s := l.k3s
	s.proc.stop(60 * time.Second)
	if err := os.Remove(s.ready); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var err error
	if s.proc, err = s.proc.again(); err != nil {
		return err
	}
	return s.waitReady(ctx)
}

// OnServer returns a command that runs argv on the k3s server, where k3s's
// files are where k3s keeps them (/etc/rancher/k3s, /var/lib/rancher/k3s):
// what `sudo <argv>` on a k3s server runs. The caller sets its environment
// and output.
func (l *Lane) OnServer(ctx context.Context, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(l.opts.BinDir, "ballast-k3s"),
		append([]string{"--spec", l.k3s.specFile, "exec", "--"}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	return cmd
}

// K3sPath is where a file of the k3s server (such as
// /etc/rancher/k3s/config.yaml.d) is on this machine.
func (l *Lane) K3sPath(inView string) string { return l.k3s.view.Path(inView) }

// copyInto copies file into dir, keeping its name.
func copyInto(file, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	src, err := os.Open(file)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, filepath.Base(file)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("copying %s into %s: %w", file, dir, err)
	}
	return dst.Close()
}
