package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/scheduler/pkg/options"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/ballast-sched/ballast/core/objects"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// A plain upstream profile next to Ballast's, in the same scheduler.
const defaultProfile = `- schedulerName: default-scheduler
`

// TestHotMemoryNodeIsAvoided: node-2 is at 95 % real memory but has almost
// nothing requested. The default profile puts about a third of a 30-replica
// Deployment there; the ballast-scheduler profile puts none.
func TestHotMemoryNodeIsAvoided(t *testing.T) {
	c, ctx := startCluster(t, "node-1", "node-2", "node-3")
	usage := static.New()
	usage.Set("node-1", 20, 30)
	usage.Set("node-2", 20, 95)
	usage.Set("node-3", 20, 30)
	config := withProfile(shippedProfile(t, "ballast-scheduler.yaml"), defaultProfile)
	if _, err := c.StartScheduler(ctx, config, plugins.NewRegistry(staticUsage(t, c, usage, time.Second), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}

	create := func(name, scheduler string) map[string]int {
		if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment(name).SchedulerName(scheduler).Replicas(30).Requests("50m", "100Mi").Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return placement(t, ctx, c, name, 30)
	}
	byDefault := create("nginx-default", "default-scheduler")
	t.Logf("default-scheduler: %v", byDefault)
	if n := byDefault["node-2"]; n < 5 || n > 15 {
		t.Errorf("default profile put %d of 30 pods on node-2, want about a third (5–15): %v", n, byDefault)
	}
	deleteDeployment(t, ctx, c, "nginx-default")

	byBallast := create("nginx-ballast", "ballast-scheduler")
	t.Logf("ballast-scheduler: %v", byBallast)
	if byBallast["node-2"] != 0 || byBallast["node-1"]+byBallast["node-3"] != 30 {
		t.Errorf("ballast-scheduler placed %v, want all 30 on node-1 and node-3", byBallast)
	}
	if byBallast["node-1"] < 10 || byBallast["node-3"] < 10 {
		t.Errorf("ballast-scheduler placed %v, want node-1 and node-3 to share the pods", byBallast)
	}
}

// podCountProfile scores by free pod slots alone.
const podCountProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-pod-count
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: PodCountBalance
`

// TestPodCountBalance: with 21, 17 and 25 pods on the nodes, the next pod
// goes to the 17-pod node.
func TestPodCountBalance(t *testing.T) {
	c, ctx := startCluster(t, "node-1", "node-2", "node-3")
	for node, n := range map[string]int{"node-1": 21, "node-2": 17, "node-3": 25} {
		for i := 0; i < n; i++ {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-existing-%d", node, i), Namespace: "default"},
				Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
			}
			if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.StartScheduler(ctx, podCountProfile, plugins.NewRegistry(staticUsage(t, c, static.New(), time.Second), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("next").SchedulerName("ballast-pod-count").Replicas(1).Requests("10m", "10Mi").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := placement(t, ctx, c, "next", 1)
	if got["node-2"] != 1 {
		t.Errorf("next pod placed %v, want it on node-2 (17 pods)", got)
	}
}

// herdingProfile scores by LoadAware alone so nothing else spreads pods.
// LoadAware is enabled at every extension point (multiPoint), which includes
// Reserve: that is where a placed pod starts to count on its node.
const herdingProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-herding
  plugins:
    multiPoint:
      enabled:
      - name: LoadAware
    score:
      disabled:
      - name: "*"
      enabled:
      - name: LoadAware
`

// TestBurstSpreads: 20 pods created at once while usage is not refreshed
// (the samples keep saying node-1 is the coolest). Without anti-herding all
// 20 would land on node-1; with it each pod counts on its node at once.
func TestBurstSpreads(t *testing.T) {
	c, ctx := startCluster(t, "node-1", "node-2", "node-3")
	usage := static.New()
	usage.Set("node-1", 10, 10)
	usage.Set("node-2", 20, 10)
	usage.Set("node-3", 20, 10)
	if _, err := c.StartScheduler(ctx, herdingProfile, plugins.NewRegistry(staticUsage(t, c, usage, time.Second), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}
	// Each pod is estimated at 200m of 4 CPUs: 5 %.
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("burst").SchedulerName("ballast-herding").Replicas(20).Requests("200m", "64Mi").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := placement(t, ctx, c, "burst", 20)
	t.Logf("placement: %v", got)
	// Balanced predicted CPU: node-1 10+5×8 = 50 %, the others 20+5×6 = 50 %.
	for _, n := range []string{"node-2", "node-3"} {
		if got[n] < 4 {
			t.Errorf("%s got %d pods, want the burst spread (≥4 each): %v", n, got[n], got)
		}
	}
	if got["node-1"] > 12 {
		t.Errorf("node-1 got %d of 20 pods, want the burst spread: %v", got["node-1"], got)
	}
}

// TestLoadWatcherUnreachable: with nothing listening at the load-watcher
// address, pods still schedule by requests, each gets an event, and the
// metric counts the fall-back.
func TestLoadWatcherUnreachable(t *testing.T) {
	c, ctx := startCluster(t, "node-1", "node-2", "node-3")
	before := unavailableCount(t, "LoadAware", nodeload.CauseMissing)
	opts := &options.Options{LoadWatcherAddress: "http://127.0.0.1:1", LoadWatcherMode: options.ModeService, StaleAfter: 90 * time.Second}
	if _, err := c.StartScheduler(ctx, shippedProfile(t, "ballast-scheduler.yaml"), plugins.NewRegistry(plugins.FlagSource(opts), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("web").SchedulerName("ballast-scheduler").Replicas(6).Requests("100m", "128Mi").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := placement(t, ctx, c, "web", 6)
	t.Logf("placement: %v", got)

	if after := unavailableCount(t, "LoadAware", nodeload.CauseMissing); after-before < 6*3 {
		t.Errorf("ballast_scheduler_usage_unavailable_total{plugin=LoadAware,cause=UsageMissing} rose by %v, want at least 18 (6 pods × 3 nodes)", after-before)
	}
	// One UsageMissing event per pod and plugin that noticed.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := c.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		perPod := map[string]int{}
		for _, e := range events.Items {
			if e.Reason == string(nodeload.CauseMissing) && strings.HasPrefix(e.Note, "LoadAware:") {
				perPod[e.Regarding.Name]++
			}
		}
		for pod, n := range perPod {
			if n > 1 {
				return false, fmt.Errorf("pod %s got %d LoadAware UsageMissing events, want one", pod, n)
			}
		}
		return len(perPod) == 6, nil
	})
	if err != nil {
		t.Errorf("waiting for one UsageMissing event per pod: %v", err)
	}
}

func unavailableCount(t *testing.T, plugin string, cause nodeload.Cause) float64 {
	t.Helper()
	m, _ := gathered(t, "ballast_scheduler_usage_unavailable_total", map[string]string{"plugin": plugin, "cause": string(cause)})
	return m.GetCounter().GetValue()
}

// gathered returns the series of the metric called name with labels from
// the scheduler's registry; false (and a nil series, whose values read 0)
// when there is none.
func gathered(t *testing.T, name string, labels map[string]string) (*dto.Metric, bool) {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for k, v := range labels {
				if label(m, k) != v {
					continue series
				}
			}
			return m, true
		}
	}
	return nil, false
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestInvalidArgsExitNonZero runs the ballast-scheduler command as a
// process with a threshold of 120 %: it must exit non-zero naming the field.
func TestInvalidArgsExitNonZero(t *testing.T) {
	c, _ := startCluster(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	err := os.WriteFile(config, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: `+c.KubeconfigPath()+`
profiles:
- schedulerName: ballast-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: LoadAware
  pluginConfig:
  - name: LoadAware
    args:
      thresholds:
        memory: 120
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "--config="+config, "--secure-port=0", "--load-watcher-address=http://127.0.0.1:1")
	cmd.Env = append(os.Environ(), runCommandEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	exitErr, ok := err.(*exec.ExitError)
	if !ok || exitErr.ExitCode() == 0 {
		t.Fatalf("command returned %v, want a non-zero exit; output:\n%s", err, out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "thresholds[memory]") {
			t.Logf("exit code %d: %s", exitErr.ExitCode(), line)
			return
		}
	}
	t.Errorf("output does not name thresholds[memory]:\n%s", out.String())
}

// TestPodRejectedForUsageIsRetriedWhenANodeCools: every node is above the
// memory threshold, so a pod waits, unschedulable. No cluster event follows
// when a node's usage falls: the pod goes back to the active queue when
// load-watcher's next snapshot shows the node under the threshold, and is
// bound at once rather than after kube-scheduler's periodic flush of
// unschedulable pods (5 minutes).
func TestPodRejectedForUsageIsRetriedWhenANodeCools(t *testing.T) {
	c, ctx := startCluster(t, "node-1", "node-2")
	usage := static.New()
	usage.Set("node-1", 20, 95)
	usage.Set("node-2", 20, 96)
	if _, err := c.StartScheduler(ctx, shippedProfile(t, "ballast-scheduler.yaml"), plugins.NewRegistry(staticUsage(t, c, usage, time.Second), plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("waits").SchedulerName("ballast-scheduler").Replicas(1).Requests("100m", "128Mi").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Rejected by LoadAware on both nodes, and left in the unschedulable
	// queue: several snapshots pass and it stays unbound.
	var rejected *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=waits"})
		if err != nil || len(pods.Items) != 1 {
			return false, err
		}
		for _, cond := range pods.Items[0].Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable && strings.Contains(cond.Message, "exceeds threshold") {
				rejected = &pods.Items[0]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for the pod to be rejected for memory: %v", err)
	}
	time.Sleep(3 * time.Second)
	if p, err := c.Client.CoreV1().Pods("default").Get(ctx, rejected.Name, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("while every node is hot the pod is %v (%v), want it unbound", p.Spec.NodeName, err)
	}

	usage.Set("node-1", 20, 30)
	cooled := time.Now()
	got := placement(t, ctx, c, "waits", 1)
	t.Logf("bound %v after node-1 cooled: %v", time.Since(cooled).Round(100*time.Millisecond), got)
	if got["node-1"] != 1 {
		t.Errorf("placed %v, want the pod on node-1, the node that cooled", got)
	}
	if waited := time.Since(cooled); waited > time.Minute {
		t.Errorf("the pod waited %v after node-1 cooled: it was retried by the queue's flush, not when usage fell", waited)
	}
}
