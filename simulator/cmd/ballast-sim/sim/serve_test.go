package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
)

// serveScenario samples every second.
const serveScenario = `
name: two-boxes
duration: 10m
step: 1s
nodes:
- {name: box-1, cpu: "4", memory: 8Gi, background: {cpu: 400m, memory: 1Gi}}
- {name: box-2, cpu: "4", memory: 8Gi, background: {cpu: 400m, memory: 1Gi}}
workloads:
- name: api
  replicas: 4
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: constant, value: 500m}
    memory: {type: constant, value: 512Mi}
`

// syncBuffer is written by the serving command while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeUntilCancelled serves a scenario file through the command with
// the default scheduler, reports on it with `sim report`, and stops it the
// way Ctrl-C does: by cancelling the command's context.
func TestServeUntilCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "two-boxes.yaml")
	if err := os.WriteFile(file, []byte(serveScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	c := NewCommand(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	c.SetArgs([]string{file, "--serve", "--kubeconfig-out", kubeconfig, "--scheduler", "default"})
	done := make(chan error, 1)
	go func() { done <- c.ExecuteContext(ctx) }()

	client := waitForKubeconfig(t, kubeconfig, done)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) != 4 {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the default scheduler did not get the 4 api pods running: %v\n%s", err, errOut.String())
	}
	// Every node carries pods, so usage is above the 10% background once
	// load-watcher has sampled since.
	var report string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		report, err = run(t, "report", "--kubeconfig", kubeconfig)
		return err == nil && regexp.MustCompile(`pods pending +0\n`).MatchString(report), nil
	})
	if err != nil {
		t.Fatalf("sim report: %v\n%s", err, report)
	}
	for _, want := range []string{"box-1", "box-2", "utilisation spread", "load-watcher's 5m mean"} {
		if !strings.Contains(report, want) {
			t.Errorf("sim report lacks %q:\n%s", want, report)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve ended with %v\n%s", err, errOut.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not stop after its context was cancelled")
	}
	got := out.String()
	for _, want := range []string{"kubectl --kubeconfig " + kubeconfig + " get nodes", "/api/v1/usage", "SUMMARY", "box-2"} {
		if !strings.Contains(got, want) {
			t.Errorf("serve output lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig is still there after shutdown: %v", err)
	}
}

// waitForKubeconfig waits for the serving command to write its kubeconfig
// and returns a client for it.
func waitForKubeconfig(t *testing.T, path string, done <-chan error) kubernetes.Interface {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			cfg, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				t.Fatal(err)
			}
			return kubernetes.NewForConfigOrDie(cfg)
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before writing the kubeconfig: %v", err)
		case <-deadline:
			t.Fatal("serve wrote no kubeconfig")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
