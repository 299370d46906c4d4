//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	lwv1 "github.com/ballast-sched/ballast/core/api/v1"
)

const deschedulerLease = "ballast-descheduler"

// faults are injected one after another, in this order, on one running
// installation.
var faults = []fault{
	{name: "none (reference)", inject: func(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
		sleep(ctx, 30*time.Second)
		r.note = "the stream alone"
	}},
	{name: "load-watcher killed", inject: killLoadWatcher},
	{name: "scheduler leader killed", inject: killLeader(ballastScheduler)},
	{name: "scheduler leader deleted", inject: deleteLeader(ballastScheduler)},
	{name: "descheduler leader killed", inject: killLeader(deschedulerLease)},
	{name: "descheduler restarted (memory lost)", inject: restartDescheduler},
	{name: "API server restarted", inject: restartAPIServer},
	{name: "load-watcher answers nonsense", inject: hostileLoadWatcher},
	{name: "installer killed between writes", inject: interruptInstall},
	{name: "metrics-server down", inject: stopMetricsServer},
	{name: "a node's kubelet stopped", inject: stopKubelet},
}

// killLoadWatcher kills load-watcher's only container, as a crash or the OOM
// killer would: the kubelet restarts it with empty windows. Until it serves
// fresh usage again, the scheduler must place by requests and the
// descheduler must not evict.
func killLoadWatcher(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	pod := onePod(ctx, t, f.client, "app.kubernetes.io/name=load-watcher")
	restarts := restartCount(pod)
	r.usageLost = time.Now()
	if err := f.lane.KillContainer(ctx, pod.Spec.NodeName, containerID(t, pod)); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "load-watcher to restart and be Ready", 3*time.Minute, func(ctx context.Context) (bool, string) {
		p, err := f.client.CoreV1().Pods(ballastNamespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return restartCount(*p) > restarts && podReady(*p), fmt.Sprintf("restarts=%d ready=%t", restartCount(*p), podReady(*p))
	})
	waitUsage(ctx, t, f.client, func(lwv1.NodeUsage) bool { return true })
	r.usageBack = time.Now()
	r.recovery = r.usageBack.Sub(r.usageLost)
	r.note = "restarted by the kubelet; recovery ends when it serves fresh usage again"
}

// killLeader kills the container of the replica that holds lease, and
// measures how long until another one holds it.
func killLeader(lease string) func(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	return func(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
		holder, _ := waitHolder(ctx, t, f.client, lease, "")
		pod, err := f.client.CoreV1().Pods(ballastNamespace).Get(ctx, podOfHolder(holder), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the holder of lease %s, %s, is not a pod of %s: %v", lease, holder, ballastNamespace, err)
		}
		start := time.Now()
		if err := f.lane.KillContainer(ctx, pod.Spec.NodeName, containerID(t, *pod)); err != nil {
			t.Fatal(err)
		}
		newHolder, at := waitHolder(ctx, t, f.client, lease, holder)
		r.failover = at.Sub(start)
		waitReplicasReady(ctx, t, f.client)
		r.recovery = time.Since(start)
		taker := podOfHolder(newHolder)
		if taker == pod.Name {
			taker = "its restarted container"
		}
		r.note = fmt.Sprintf("SIGKILL of %s; %s took over", pod.Name, taker)
	}
}

// deleteLeader deletes the pod of the replica that holds lease, as a rollout
// or a node drain does: it stops on SIGTERM and should hand the lease over
// instead of letting it run out.
func deleteLeader(lease string) func(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	return func(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
		holder, _ := waitHolder(ctx, t, f.client, lease, "")
		start := time.Now()
		if err := f.client.CoreV1().Pods(ballastNamespace).Delete(ctx, podOfHolder(holder), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		newHolder, at := waitHolder(ctx, t, f.client, lease, holder)
		r.failover = at.Sub(start)
		waitReplicasReady(ctx, t, f.client)
		r.recovery = time.Since(start)
		r.note = fmt.Sprintf("%s deleted (SIGTERM); %s took over", podOfHolder(holder), podOfHolder(newHolder))
	}
}

// restartDescheduler deletes every descheduler pod at once, as a rollout or
// a node drain does: whatever the descheduler remembered of its last moves
// is gone.
func restartDescheduler(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	holder, _ := waitHolder(ctx, t, f.client, deschedulerLease, "")
	start := time.Now()
	err := f.client.CoreV1().Pods(ballastNamespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=descheduler"})
	if err != nil {
		t.Fatal(err)
	}
	_, at := waitHolder(ctx, t, f.client, deschedulerLease, holder)
	r.failover = at.Sub(start)
	waitReplicasReady(ctx, t, f.client)
	r.recovery = time.Since(start)
	r.note = "both pods deleted; failover is until a new pod leads"
}

// hostileLoadWatcher puts a hostile server behind load-watcher's Service for
// three descheduling cycles: it answers, in turn, more than a client should
// read, a well-formed list of absurd numbers, and no JSON at all. The
// scheduler must place by requests and the descheduler must evict nothing.
func hostileLoadWatcher(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	svc, err := f.client.CoreV1().Services(ballastNamespace).Get(ctx, "ballast-load-watcher", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale := func(n int32) { scaleDeployment(ctx, t, f.client, ballastNamespace, "ballast-load-watcher", n) }
	start := time.Now()
	r.usageLost = start
	scale(0)
	hostile := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hostile-load-watcher", Namespace: ballastNamespace, Labels: svc.Spec.Selector},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext:               &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "hostile", Image: hostileImage, ImagePullPolicy: corev1.PullNever,
				Args: []string{"--nodes", strings.Join(f.lane.Nodes(), ","), "--address", ":2020"},
				// The Service targets load-watcher's port by name.
				Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 2020}},
				SecurityContext: restricted(),
			}},
		},
	}
	if _, err := f.client.CoreV1().Pods(ballastNamespace).Create(ctx, hostile, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the hostile server to answer for load-watcher", 2*time.Minute, func(ctx context.Context) (bool, string) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		raw, err := proxyGet(ctx, f.client, "/api/v1/usage")
		return err == nil, fmt.Sprint(len(raw), err)
	})
	// Until every client has called its last good answer stale, and two
	// descheduling cycles more.
	sleep(ctx, clientStaleAfter+40*time.Second-time.Since(start))
	if err := f.client.CoreV1().Pods(ballastNamespace).Delete(ctx, hostile.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	scale(1)
	waitReplicasReady(ctx, t, f.client)
	waitUsage(ctx, t, f.client, func(lwv1.NodeUsage) bool { return true })
	r.usageBack = time.Now()
	r.recovery = r.usageBack.Sub(start)
	r.note = "oversized, absurd and non-JSON answers behind load-watcher's Service until every client called its last answer stale, and 40 s more; recovery ends when load-watcher serves again"
}

// restartAPIServer stops kube-apiserver for 10 s, longer than the leaders'
// renew deadline, and starts it again.
func restartAPIServer(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	sigterm := time.Now()
	stopped, ready, err := f.lane.RestartAPIServer(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Every lease renewed after the restart, every replica Ready, fresh
	// usage: Ballast works as before.
	for _, lease := range []string{ballastScheduler, deschedulerLease} {
		poll(ctx, t, "lease "+lease+" renewed after the restart", 3*time.Minute, func(ctx context.Context) (bool, string) {
			l, err := f.client.CoordinationV1().Leases(ballastNamespace).Get(ctx, lease, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return l.Spec.RenewTime != nil && l.Spec.RenewTime.After(ready), fmt.Sprintf("%+v", l.Spec)
		})
	}
	waitReplicasReady(ctx, t, f.client)
	waitUsage(ctx, t, f.client, func(lwv1.NodeUsage) bool { return true })
	r.recovery = time.Since(sigterm)
	r.note = fmt.Sprintf("down %s (SIGTERM to ready; %s of it shutting down)",
		ready.Sub(sigterm).Round(100*time.Millisecond), stopped.Sub(sigterm).Round(100*time.Millisecond))
}

// interruptInstall starts an upgrade that changes the scheduler's
// configuration, kills the installer the moment its release record is
// written, and runs the same command again: it must finish the job.
func interruptInstall(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	args := append([]string{"install", "--root", t.TempDir(), "--timeout", "5m"}, f.values...)
	args = append(args, "--set", "scheduler.plugins.loadAware.weight=4")
	before := releaseRevisions(ctx, t, f.client)
	cmd := f.ballast(args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the installer to write a new release revision", 2*time.Minute, func(ctx context.Context) (bool, string) {
		return releaseRevisions(ctx, t, f.client) > before, out.String()
	})
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	again, err := f.ballast(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ballast install after an interrupted one: %v\n%s", err, again)
	}
	waitReplicasReady(ctx, t, f.client)
	r.recovery = time.Since(start)
	r.note = "SIGKILL once the new revision was recorded; the same command run again"
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// waitHolder waits until lease is held, renewed within its duration, by
// someone other than not, and returns the holder and when that was seen.
func waitHolder(ctx context.Context, t *testing.T, c kubernetes.Interface, lease, not string) (string, time.Time) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		l, err := c.CoordinationV1().Leases(ballastNamespace).Get(ctx, lease, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && *l.Spec.HolderIdentity != not &&
			l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) < leaseDuration {
			return *l.Spec.HolderIdentity, time.Now()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("lease %s/%s: no new holder (not %q) within 3m: %v %+v", ballastNamespace, lease, not, err, l)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// podOfHolder is the pod a leader-election identity names: the pod's
// hostname (its name) and a unique suffix.
func podOfHolder(holder string) string {
	if i := strings.LastIndex(holder, "_"); i > 0 {
		return holder[:i]
	}
	return holder
}

func onePod(ctx context.Context, t *testing.T, c kubernetes.Interface, selector string) corev1.Pod {
	t.Helper()
	list, err := c.CoreV1().Pods(ballastNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("want one pod %s, got %v (%v)", selector, len(list.Items), err)
	}
	return list.Items[0]
}

func containerID(t *testing.T, p corev1.Pod) string {
	t.Helper()
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].ContainerID == "" {
		t.Fatalf("pod %s has no running container", p.Name)
	}
	return p.Status.ContainerStatuses[0].ContainerID
}

func restartCount(p corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// waitReplicasReady waits until every Deployment of Ballast has all its
// replicas Ready.
func waitReplicasReady(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	t.Helper()
	poll(ctx, t, "every Ballast replica Ready", 3*time.Minute, func(ctx context.Context) (bool, string) {
		list, err := c.AppsV1().Deployments(ballastNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var pending []string
		for _, d := range list.Items {
			want := ptr.Deref(d.Spec.Replicas, 1)
			if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas < want ||
				d.Status.ReadyReplicas < want || d.Status.Replicas != want {
				pending = append(pending, fmt.Sprintf("%s %d/%d", d.Name, d.Status.ReadyReplicas, want))
			}
		}
		return len(list.Items) > 0 && len(pending) == 0, strings.Join(pending, ", ")
	})
}

// releaseRevisions counts the Helm release records of Ballast.
func releaseRevisions(ctx context.Context, t *testing.T, c kubernetes.Interface) int {
	t.Helper()
	list, err := c.CoreV1().Secrets(ballastNamespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		return -1
	}
	return len(list.Items)
}

// evictionTimes lists when the descheduler evicted pods, from its events.
func evictionTimes(ctx context.Context, c kubernetes.Interface) ([]time.Time, error) {
	list, err := c.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	var out []time.Time
	for _, e := range list.Items {
		if e.Action != "Descheduled" || e.Type != corev1.EventTypeNormal {
			continue
		}
		at := e.EventTime.Time
		if at.IsZero() {
			at = e.DeprecatedFirstTimestamp.Time
		}
		out = append(out, at)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out, nil
}

// reportFaults logs the reliability table and writes it where
// BALLAST_E2E_RELIABILITY says (docs/reliability.md holds a copy).
func reportFaults(t *testing.T, results []*faultResult, refused, lost int) {
	var b strings.Builder
	fmt.Fprintf(&b, "| Fault | Pairs (straddling the fault's edge, not compared) | Pending > %s beyond default | Longest extra wait | Evictions (on stale data) | Failover | Recovery | Note |\n",
		extraWaitGoal)
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|---|\n")
	dur := func(d time.Duration) string {
		if d == 0 {
			return "—"
		}
		return d.Round(100 * time.Millisecond).String()
	}
	for _, r := range results {
		failover := dur(r.failover)
		if r.failover > failoverGoal {
			failover += " (over goal)"
		}
		fmt.Fprintf(&b, "| %s | %d (%d) | %d | %s | %d (%d) | %s | %s | %s |\n", r.name, r.pairs, r.straddling, r.tooLong,
			dur(max(r.maxExtra, 0)), r.evictions, r.staleEvictions, failover, dur(r.recovery), r.note)
	}
	fmt.Fprintf(&b, "\nPods lost (stream pods never bound, replicas of the workload `steady` not available at the end): %d. "+
		"Create calls refused and retried while the API server was down: %d.\n", lost, refused)
	t.Logf("reliability:\n%s", b.String())
	if path := os.Getenv("BALLAST_E2E_RELIABILITY"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Errorf("writing the reliability table: %v", err)
		}
	}
}

// stopKubelet stops the second node's kubelet (SIGSTOP), as a kubelet that
// hangs or a node cut off from the API server: its containers keep running,
// but the node stops reporting, the node controller marks it NotReady and
// taints it, and metrics-server gets nothing from it (and when load-watcher
// runs there, its Service has no ready endpoint: no client gets any usage).
// It stays stopped until the node is NotReady and every client has called
// its usage stale, and two descheduling cycles more; then it goes on. Meanwhile a Deployment for
// Ballast's scheduler is created: no pod may be bound to the node while it
// is NotReady, and no eviction may be decided on its stale samples (the
// descheduler has no other destination, so any eviction of the window
// would be). Recovery ends when the node is Ready and reported fresh again,
// and the Deployment's pods all run. The node's own pods are not lost: it
// comes back within the NoExecute toleration (5 minutes) that would evict
// them.
func stopKubelet(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	node := f.lane.Nodes()[1]
	// ready reads the node's Ready condition: whether it is True, and
	// since when it is what it is (the API server's stamp, in whole
	// seconds).
	var since time.Time
	ready := func(ctx context.Context) (bool, bool) {
		n, err := f.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, false
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				since = c.LastTransitionTime.Time
				return c.Status == corev1.ConditionTrue, true
			}
		}
		return false, false
	}
	// load-watcher may run on the node: then its Service has no ready
	// endpoint once the node is NotReady, and every client goes without
	// usage until the node is back, which must be as safe.
	lw := onePod(ctx, t, f.client, "app.kubernetes.io/name=load-watcher")
	resume, err := f.lane.PauseKubelet(node)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r.usageLost = start
	defer func() {
		if err := resume(); err != nil {
			t.Error(err)
		}
	}()
	poll(ctx, t, node+" to be NotReady", 3*time.Minute, func(ctx context.Context) (bool, string) {
		isReady, known := ready(ctx)
		return known && !isReady, fmt.Sprintf("ready=%t", isReady)
	})
	notReady := since
	probe := deployment("probe", 2, ballastScheduler, "32Mi")
	probe.Namespace = faultsNS
	if _, err := f.client.AppsV1().Deployments(faultsNS).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "load-watcher to call "+node+" stale", 3*time.Minute, func(ctx context.Context) (bool, string) {
		u, err := readUsage(ctx, f.client)
		if err != nil {
			return lw.Spec.NodeName == node && !errors.Is(err, errNotUsage), "load-watcher unreachable: " + err.Error()
		}
		n, found := u.Nodes[node]
		return !found || n.Stale, fmt.Sprintf("found=%t %+v", found, n)
	})
	// Until every client has called the node's last sample stale, and two
	// descheduling cycles more.
	sleep(ctx, clientStaleAfter+40*time.Second-time.Since(start))
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	// The node's Ready condition and its usage are watched together: the
	// descheduler may act on the node the moment load-watcher serves a
	// sample of it taken since it stopped and not stale, which may come
	// before the test sees the node Ready. Usage is back from then on.
	var readyAgain, freshAt time.Time
	poll(ctx, t, node+" to be Ready again and load-watcher to report it fresh", 3*time.Minute, func(ctx context.Context) (bool, string) {
		if readyAgain.IsZero() {
			if isReady, _ := ready(ctx); isReady {
				readyAgain = since
			}
		}
		u, err := readUsage(ctx, f.client)
		if err != nil {
			return false, err.Error()
		}
		n, found := u.Nodes[node]
		if found && !n.Stale && n.SampleTime.After(start) && freshAt.IsZero() {
			freshAt = time.Now()
		}
		return !readyAgain.IsZero() && found && !n.Stale && n.SampleTime.After(resumed),
			fmt.Sprintf("ready=%t found=%t %+v", !readyAgain.IsZero(), found, n)
	})
	r.usageBack = freshAt
	f.down = append(f.down, window{node: node, start: start, end: readyAgain})
	if err := f.lane.WaitDeploymentsAvailable(ctx, faultsNS, 3*time.Minute); err != nil {
		t.Errorf("after %s came back: %v\n%s", node, err, describeNamespace(ctx, f.client, faultsNS))
	}
	r.recovery = time.Since(start)
	// No pod bound to the node while it was NotReady: both stamps are in
	// whole seconds, so a binding in the second the node changed is not
	// counted either way.
	pods, err := f.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	var boundWhileDown []string
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			// The API server stamps the binding in whole seconds.
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue &&
				c.LastTransitionTime.Time.After(notReady) && c.LastTransitionTime.Time.Before(readyAgain) {
				boundWhileDown = append(boundWhileDown, fmt.Sprintf("%s/%s at %s", p.Namespace, p.Name, c.LastTransitionTime.Format(time.TimeOnly)))
			}
		}
	}
	if len(boundWhileDown) > 0 {
		t.Errorf("pods bound to %s while it was NotReady (%s–%s): %v; goal: none", node,
			notReady.Format(time.TimeOnly), readyAgain.Format(time.TimeOnly), boundWhileDown)
	}
	if err := f.client.AppsV1().Deployments(faultsNS).Delete(ctx, probe.Name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
	where := "load-watcher on the other node"
	if lw.Spec.NodeName == node {
		where = "load-watcher on it, so no usage at all until it was back"
	}
	r.note = fmt.Sprintf("SIGSTOP of %s's kubelet (%s); NotReady after %s, stopped %s; a Deployment created meanwhile: none of its pods, nor any other, bound to the node while NotReady",
		node, where, notReady.Sub(start).Round(time.Second), resumed.Sub(start).Round(time.Second))
}

// stopMetricsServer scales metrics-server, load-watcher's source, to 0 as a
// crash loop or a failed upgrade of it would, until every client has called
// its last usage stale and two descheduling cycles more, then back to 1:
// load-watcher has nothing new to serve, the scheduler must place by
// requests and the descheduler evict nothing. Recovery ends when
// load-watcher serves fresh usage again.
func stopMetricsServer(ctx context.Context, t *testing.T, f *faultEnv, r *faultResult) {
	scale := func(n int32) { scaleDeployment(ctx, t, f.client, metav1.NamespaceSystem, "metrics-server", n) }
	start := time.Now()
	r.usageLost = start
	scale(0)
	poll(ctx, t, "load-watcher to call every node stale", 3*time.Minute, func(ctx context.Context) (bool, string) {
		u, err := readUsage(ctx, f.client)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range f.lane.Nodes() {
			if nu, found := u.Nodes[n]; found && !nu.Stale {
				return false, fmt.Sprintf("%s: %+v", n, nu)
			}
		}
		return true, ""
	})
	sleep(ctx, clientStaleAfter+40*time.Second-time.Since(start))
	restarted := time.Now()
	scale(1)
	if err := f.lane.WaitDeploymentsAvailable(ctx, metav1.NamespaceSystem, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	waitUsage(ctx, t, f.client, func(n lwv1.NodeUsage) bool { return n.SampleTime.After(restarted) })
	r.usageBack = time.Now()
	r.recovery = r.usageBack.Sub(start)
	r.note = fmt.Sprintf("scaled to 0 for %s, until every client called its last usage stale and 40 s more; recovery ends when load-watcher serves fresh usage again",
		restarted.Sub(start).Round(time.Second))
}

// scaleDeployment sets the replicas of namespace/name through its scale
// subresource, as `kubectl scale` does.
func scaleDeployment(ctx context.Context, t *testing.T, c kubernetes.Interface, namespace, name string, n int32) {
	t.Helper()
	deployments := c.AppsV1().Deployments(namespace)
	s, err := deployments.GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = n
	if _, err := deployments.UpdateScale(ctx, name, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// errNotUsage marks an answer of load-watcher's Service that is not a usage
// list.
var errNotUsage = errors.New("not a usage list")

// readUsage asks load-watcher, through its Service, for the usage it
// serves.
func readUsage(ctx context.Context, c kubernetes.Interface) (lwv1.UsageList, error) {
	var u lwv1.UsageList
	raw, err := proxyGet(ctx, c, lwv1.Path)
	if err != nil {
		return u, err
	}
	if err := json.Unmarshal(raw, &u); err != nil {
		return u, fmt.Errorf("%w: %v", errNotUsage, err)
	}
	return u, nil
}
