package lane

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKubeletStandIn is not a test: run by TestPauseKubelet as a process
// whose argv[0] is "kubelet", it waits to be killed.
func TestKubeletStandIn(t *testing.T) {
	if os.Getenv("BALLAST_KUBELET_STAND_IN") == "" {
		t.Skip("run by TestPauseKubelet")
	}
	time.Sleep(time.Minute)
}

// processState is the state letter of /proc/PID/stat: R, S, T (stopped)…
func processState(t *testing.T, pid int) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state …; comm may hold spaces, so read after the last ')'.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	return fields[0]
}

// The kubelet a node's --root-dir names is found among the machine's
// processes, stopped and continued; a process with another root, or not
// named kubelet, is not taken for it.
func TestPauseKubelet(t *testing.T) {
	dir := t.TempDir()
	start := func(argv0, root string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKubeletStandIn$", "--", "--root-dir="+root)
		cmd.Args[0] = argv0
		cmd.Env = append(os.Environ(), "BALLAST_KUBELET_STAND_IN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	start("not-kubelet", filepath.Join(dir, "node", "kubelet"))
	start("kubelet", filepath.Join(dir, "node-2", "kubelet"))
	kubelet := start("/opt/bin/kubelet", filepath.Join(dir, "node", "kubelet"))

	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if pid, err = kubeletPID(filepath.Join(dir, "node", "kubelet")); err == nil || time.Now().After(deadline) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid != kubelet.Process.Pid {
		t.Fatalf("kubeletPID = %d, want %d", pid, kubelet.Process.Pid)
	}
	if _, err := kubeletPID(filepath.Join(dir, "node-3", "kubelet")); err == nil {
		t.Error("found a kubelet for a root no process has")
	}

	l := &Lane{nodes: []*laneNode{{name: "n1", dir: filepath.Join(dir, "node")}}}
	resume, err := l.PauseKubelet("n1")
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, pid, "T")
	if _, err := l.PauseKubelet("n1"); err == nil {
		t.Error("a second pause of a paused kubelet was accepted")
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	waitState(t, pid, "S", "R")
	if _, err := l.PauseKubelet("nope"); err == nil {
		t.Error("pausing the kubelet of a node the lane lacks was accepted")
	}
}

func waitState(t *testing.T, pid int, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := processState(t, pid)
		for _, w := range want {
			if got == w {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is in state %s, want one of %v", pid, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
