package lane

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// PauseKubelet stops node's kubelet with SIGSTOP, as a kubelet that hangs or
// a node cut off from the API server looks from the cluster: the node stops
// reporting (its Lease and status go stale, the node controller marks it
// NotReady and taints it, metrics-server gets nothing from it), while its
// containers, containerd and kube-proxy keep running. resume sends SIGCONT;
// the lane resumes a kubelet still paused when it stops.
func (l *Lane) PauseKubelet(node string) (resume func() error, err error) {
	for _, n := range l.nodes {
		if n.name != node {
			continue
		}
		if n.pausedKubelet != 0 {
			return nil, fmt.Errorf("the kubelet of %s is paused already", node)
		}
		pid, err := kubeletPID(filepath.Join(n.dir, "kubelet"))
		if err != nil {
			return nil, fmt.Errorf("finding the kubelet of %s: %w", node, err)
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return nil, fmt.Errorf("pausing the kubelet of %s (pid %d): %w", node, pid, err)
		}
		n.pausedKubelet = pid
		return n.resumeKubelet, nil
	}
	return nil, fmt.Errorf("pausing a kubelet: no node %q in the lane", node)
}

// resumeKubelet continues the node's paused kubelet, if any.
func (n *laneNode) resumeKubelet() error {
	pid := n.pausedKubelet
	if pid == 0 {
		return nil
	}
	n.pausedKubelet = 0
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		return fmt.Errorf("resuming the kubelet of %s (pid %d): %w", n.name, pid, err)
	}
	return nil
}

// kubeletPID finds the process of the kubelet whose --root-dir is rootDir:
// each node's kubelet has a root of its own.
func kubeletPID(rootDir string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	want := []byte("--root-dir=" + rootDir)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
		if len(argv) == 0 || filepath.Base(string(argv[0])) != "kubelet" {
			continue
		}
		for _, a := range argv[1:] {
			if bytes.Equal(a, want) {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no kubelet runs with --root-dir=%s", rootDir)
}
