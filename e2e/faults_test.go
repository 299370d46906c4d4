//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"

	lwv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/cluster"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/explain"

	"github.com/ballast-sched/ballast/e2e/pkg/lane"
)

// The goals of docs/reliability.md.
const (
	// extraWaitGoal: a Ballast pod may wait this much longer than its twin
	// for the default scheduler before it counts as pending too long.
	extraWaitGoal = 10 * time.Second
	// The chart's leader election, which the suite keeps.
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
	// failoverGoal bounds how long a crashed leader's lease can hold up
	// its component under client-go's protocol: a standby counts the lease
	// from when it saw the last renewal, which it sees up to one jittered
	// retry period late, and takes it at its first attempt after, up to one
	// more; each wait is up to (1 + JitterFactor) retry periods.
	failoverGoal = leaseDuration + 2*time.Duration((1+leaderelection.JitterFactor)*float64(retryPeriod))
	// clientStaleAfter is how old the newest sample of an answer may be
	// before the scheduler and the descheduler call it stale (the chart's
	// scheduler.loadWatcherStaleAfter, the descheduler's default).
	clientStaleAfter = 90 * time.Second
	faultsNS         = "faults"
	hostileImage     = "ballast.local/e2e/hostile:e2e"
)

// fault is one thing that goes wrong, injected while the stream runs.
type fault struct {
	name string
	// inject breaks something and waits until Ballast has recovered; it
	// fills in what it measured.
	inject func(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult)
}

// faultEnv is what a fault acts on.
type faultEnv struct {
	lane    *lane.Lane
	client  kubernetes.Interface
	ballast func(args ...string) *exec.Cmd
	values  []string
}

// faultResult is one row of the reliability table.
type faultResult struct {
	name       string
	start, end time.Time
	// failover is how long no replica held the component's lease (leader
	// faults only); recovery how long until Ballast worked as before.
	failover, recovery time.Duration
	// usageLost and usageBack bound the time load-watcher served no
	// usable answer. Ballast's clients keep their last answer until its
	// newest sample is older than clientStaleAfter: an eviction later than
	// usageLost+clientStaleAfter and before usageBack was decided on stale
	// data.
	usageLost, usageBack time.Time
	pairs                int
	tooLong              int
	maxExtra             time.Duration
	staleEvictions       int
	evictions            int
	note                 string
}

// TestFaults runs Ballast as a user does — the chart's containers on a real
// node, two replicas of the scheduler and the descheduler with leader
// election — under a steady stream of pod creations, and breaks one thing
// at a time: load-watcher, the leaders, the API server, the descheduler's
// memory, an interrupted install. Each fault is measured against its goals
// (docs/reliability.md) and a row that misses one fails the test, as does
// what must never happen: a pod that is never bound, an eviction decided
// while usage was stale, a replica that does not come back.
func TestFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	env := loadEnv(t)
	l, err := lane.Start(ctx, lane.Options{BinDir: env.bin, Images: env.images, Addons: env.addons, KeepDir: env.keep, Nodes: 2})
	if err != nil {
		t.Fatalf("starting the lane: %v", err)
	}
	t.Cleanup(l.Stop)
	home := t.TempDir()
	// The stream and the probes each get a client of their own, with room
	// enough that client-side rate limits never delay them.
	client := func() kubernetes.Interface {
		cfg := rest.CopyConfig(l.Config)
		cfg.QPS, cfg.Burst = 100, 200
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	fe := &faultEnv{lane: l, client: client(),
		values: []string{"--set", "scheduler.replicas=2", "--set", "descheduler.replicas=2",
			"--set", "descheduler.deschedulingInterval=20s"},
	}
	fe.ballast = func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, env.ballast, append(args, "--kubeconfig", l.Kubeconfig)...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		return cmd
	}
	install := append([]string{"install", "--root", t.TempDir(), "--timeout", "5m"}, fe.values...)
	if out, err := fe.ballast(install...).CombinedOutput(); err != nil {
		t.Fatalf("ballast install: %v\n%s\n%s", err, out, describeNamespace(ctx, l.Client, ballastNamespace))
	}
	waitUsage(ctx, t, l.Client, func(n lwv1.NodeUsage) bool { return true })
	// A user's Prometheus scrapes Ballast through every fault; the
	// dashboards are checked against what it holds at the end.
	prom := startPrometheus(ctx, t, l.Client)
	for _, lease := range []string{ballastScheduler, "ballast-descheduler"} {
		waitHolder(ctx, t, l.Client, lease, "")
	}
	if _, err := l.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: faultsNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A workload that must survive every fault whole: its pods may be
	// evicted, never lost. Each holds real memory, so that moving one
	// relieves a node.
	steady := deployment("steady", 4, ballastScheduler, "64Mi")
	steady.Namespace = faultsNS
	steady.Spec.Template.Spec.Containers[0].Image = hogImage
	steady.Spec.Template.Spec.Containers[0].Args = []string{"--memory", "400Mi"}
	if _, err := l.Client.AppsV1().Deployments(faultsNS).Create(ctx, steady, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDeploymentsAvailable(ctx, faultsNS, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	// A process no scheduler placed eats most of the first node's memory
	// for the whole run, so the descheduler has work while things break.
	hog := hogPod(2800)
	hog.Namespace, hog.Spec.NodeName = faultsNS, lane.NodeName
	if _, err := l.Client.CoreV1().Pods(faultsNS).Create(ctx, hog, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The stream goes to a node without a machine (a kubelet stand-in),
	// tainted so nothing else lands there: thousands of pods cost the
	// schedulers and the API server what they cost on a cluster, and no
	// container churn on the real nodes, whose usage Ballast acts on.
	standIn := cluster.StartStandIn(ctx, client())
	_, err = standIn.AddNode(ctx, cluster.NodeSpec{Name: streamNode, CPU: "64", Memory: "256Gi", Pods: 5000,
		Taints: []corev1.Taint{{Key: streamTaint, Effect: corev1.TaintEffectNoSchedule}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := startStream(ctx, client(), faultsNS, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	var results []*faultResult
	for _, f := range faults {
		r := &faultResult{name: f.name, start: time.Now()}
		results = append(results, r)
		t.Run(f.name, func(t *testing.T) {
			f.inject(ctx, t, fe, r)
			// Pods created up to now have had the fault's whole effect;
			// give the last ones the time the goal allows.
			r.end = time.Now()
			time.Sleep(extraWaitGoal + 2*time.Second)
		})
	}
	s.Stop()

	// Evictions, as the descheduler's events report them.
	evictions, err := evictionTimes(ctx, l.Client)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, r := range results {
		for _, p := range s.pairs(r.start, r.end) {
			r.pairs++
			extra := p.extraWait(now)
			r.maxExtra = max(r.maxExtra, extra)
			if extra > extraWaitGoal {
				r.tooLong++
			}
		}
		for _, at := range evictions {
			if at.Before(r.start) || !at.Before(r.end) {
				continue
			}
			r.evictions++
			if !r.usageLost.IsZero() && at.After(r.usageLost.Add(clientStaleAfter)) && at.Before(r.usageBack) {
				r.staleEvictions++
				t.Errorf("%s: an eviction at %s was decided while usage was stale (usage unusable since %s); goal: no eviction on stale data",
					r.name, at.Format(time.TimeOnly), r.usageLost.Format(time.TimeOnly))
			}
		}
	}
	holdGoals(t, results)
	unbound := s.unbound(now.Add(-2 * time.Minute))
	if len(unbound) > 0 {
		t.Errorf("pods of the stream never bound: %v", unbound)
	}
	for _, ns := range []string{ballastNamespace, faultsNS} {
		if err := l.WaitDeploymentsAvailable(ctx, ns, 3*time.Minute); err != nil {
			t.Errorf("Deployments of %s did not come back whole: %v\n%s", ns, err, describeNamespace(ctx, l.Client, ns))
		}
	}
	lost := len(unbound)
	if d, err := l.Client.AppsV1().Deployments(faultsNS).Get(ctx, "steady", metav1.GetOptions{}); err == nil {
		lost += int(*d.Spec.Replicas - d.Status.AvailableReplicas)
	}
	if lost > 0 {
		t.Errorf("Pods lost: %d; goal: 0", lost)
	}
	reportFaults(t, results, s.refusedCreates(), lost)

	t.Run("explain shows why the descheduler moved pods off the hogged node", func(t *testing.T) {
		checkMovesExplained(ctx, t, fe, l.Nodes())
	})
	t.Run("every dashboard panel has data", func(t *testing.T) {
		checkDashboards(ctx, t, prom)
	})
}

// checkMovesExplained asks `ballast explain node` about the node the hog
// filled, as a user would after seeing pods restart elsewhere: the moves off
// it, each with why (the usage and the limit it crossed, the same figures
// the move recorded), where the replacement was expected and where it ran;
// and `ballast explain pod` shows a moved workload's history.
func checkMovesExplained(ctx context.Context, t *testing.T, f *faultEnv, nodes []string) {
	t.Helper()
	hogged, other := nodes[0], nodes[1]
	out, err := f.ballast("explain", "node", hogged, "-o", "json").Output()
	if err != nil {
		t.Fatalf("ballast explain node %s: %v", hogged, err)
	}
	var ex explain.NodeExplanation
	if err := json.Unmarshal(out, &ex); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	var off []explain.MoveExplanation
	for _, m := range ex.Moves {
		if m.Source == hogged {
			off = append(off, m)
		}
	}
	if len(off) == 0 {
		t.Fatalf("ballast explain node %s lists no move off it (moves %+v, error %q); the hog there made the descheduler move pods",
			hogged, ex.Moves, ex.MovesError)
	}
	planned := 0
	for _, m := range off {
		used, after := m.SourceUsage[usage.Memory], m.ExpectedSource[usage.Memory]
		if !strings.HasPrefix(m.Why, "Moved off "+hogged+" by LoadAwareBalance: memory ") ||
			!strings.Contains(m.Why, fmt.Sprintf("memory %.1f%% over", used)) {
			t.Errorf("move of %s: why %q does not say memory on %s, with the %.1f %% the move recorded", m.Workload, m.Why, hogged, used)
		}
		if m.Destination != other || !(after < used) || !(m.DestinationUsage[usage.Memory] < used) {
			t.Errorf("move of %s: expected on %s with %s going %.1f → %.1f %% (destination at %.1f %%); want %s, cooler, the source coming down",
				m.Workload, m.Destination, hogged, used, after, m.DestinationUsage[usage.Memory], other)
		}
		if m.LandedOn == "" {
			t.Errorf("move of %s at %s: where its replacement ran is not recorded", m.Workload, m.At.Format(time.TimeOnly))
		}
		if m.LandedOn == m.Destination {
			planned++
		}
	}
	t.Logf("%d moves off %s, %d of them landed as planned", len(off), hogged, planned)
	text, err := f.ballast("explain", "node", hogged).CombinedOutput()
	if err != nil {
		t.Fatalf("ballast explain node %s: %v\n%s", hogged, err, text)
	}
	t.Logf("ballast explain node %s:\n%s", hogged, text)
	if want := "Moved off " + hogged + " by LoadAwareBalance: memory"; !strings.Contains(string(text), want) {
		t.Errorf("ballast explain node %s lacks %q", hogged, want)
	}
	// The workload's history, from one of its pods now running.
	pod := waitPodsIn(ctx, t, f.client, faultsNS, "app=steady", 1, func(p corev1.Pod) bool { return p.Spec.NodeName == other })[0]
	text, err = f.ballast("explain", "pod", faultsNS+"/"+pod.Name).CombinedOutput()
	if err != nil {
		t.Fatalf("ballast explain pod %s: %v\n%s", pod.Name, err, text)
	}
	t.Logf("ballast explain pod %s:\n%s", pod.Name, text)
	if want := "off " + hogged + ", expected on " + other; !strings.Contains(string(text), want) {
		t.Errorf("ballast explain pod %s lacks its workload's move %q", pod.Name, want)
	}
}

// holdGoals fails the test on every row that misses a goal of
// docs/reliability.md, with the figure and the goal (an eviction on stale
// data and lost pods fail it where they are counted). These are not speed:
// a wait is held relative to the default scheduler's twin under the same
// load and fault, and a failover to the bound of the leader election's own
// protocol.
func holdGoals(t *testing.T, results []*faultResult) {
	t.Helper()
	for _, r := range results {
		if r.tooLong > 0 {
			t.Errorf("%s: %d of %d Ballast pods waited more than %s longer than their default-scheduler twin (longest %s); goal: 0",
				r.name, r.tooLong, r.pairs, extraWaitGoal, r.maxExtra.Round(100*time.Millisecond))
		}
		if r.failover > failoverGoal {
			t.Errorf("%s: failover %s; goal ≤ %s (lease %s + 2 × %.1f × retry period %s)",
				r.name, r.failover.Round(100*time.Millisecond), failoverGoal, leaseDuration, 1+leaderelection.JitterFactor, retryPeriod)
		}
	}
}
