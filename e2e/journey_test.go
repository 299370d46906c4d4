//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	lwv1 "github.com/ballast-sched/ballast/core/api/v1"
	lwclient "github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/objects"
	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/e2e/pkg/lane"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/explain"
)

const (
	ballastNamespace = "ballast-system"
	ballastScheduler = "ballast-scheduler"
	// memoryThreshold is the chart's default LoadAware memory threshold.
	memoryThreshold = 90.0
	hogImage        = "ballast.local/e2e/hog:e2e"
)

// TestUserJourney is a homelab user's first contact with Ballast on a real
// node: install with the CLI, every component Running under the chart's
// restricted security context, real usage from a real metrics-server, a
// workload placed by ballast-scheduler, a memory hog that makes the node
// unschedulable for Ballast, status, and an uninstall that leaves nothing.
func TestUserJourney(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	env := loadEnv(t)

	// Ballast's images come as on a cluster that is not k3s: pushed from
	// the checkout to the user's registry, which the nodes pull from.
	start := time.Now()
	l, err := lane.Start(ctx, lane.Options{BinDir: env.bin, Images: env.laneImages(), Addons: env.addons, KeepDir: env.keep})
	if err != nil {
		t.Fatalf("starting the lane: %v", err)
	}
	t.Cleanup(l.Stop)
	t.Logf("lane up in %s (dir %s)", time.Since(start).Round(time.Second), l.Dir)
	figures := &figures{}
	defer figures.report(t, env.figures)

	ballast := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, env.ballast, append(args, "--kubeconfig", l.Kubeconfig)...)
		// Helm keeps its cache and configuration under HOME: a fresh one
		// per call, as for a new user. (--root keeps k3s detection away
		// from this machine's own files.)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("metrics-server serves the node's real usage", func(t *testing.T) {
		waitNodeMetrics(ctx, t, l.Client)
	})

	var registry string
	t.Run("make push: the images into the user's registry", func(t *testing.T) {
		host, err := l.ServeRegistry()
		if err != nil {
			t.Fatal(err)
		}
		registry = host + "/homelab/ballast"
		begin := time.Now()
		// The images of this build's host platform, linked from the
		// packages the lane's images were (--keep-paths: a plain-HTTP
		// registry of one's own may take them).
		cmd := exec.CommandContext(ctx, "make", "-C", "..", "--no-print-directory", "push", "REGISTRY="+registry, "PLAIN_HTTP=1",
			"PLATFORMS=linux/"+runtime.GOARCH, "PUSH_FLAGS=--keep-paths --out "+filepath.Join(l.Dir, "pushed-images"))
		out, err := cmd.CombinedOutput()
		figures.push = time.Since(begin)
		if err != nil {
			t.Fatalf("make push: %v\n%s", err, out)
		}
		for _, repo := range []string{"load-watcher", "ballast-scheduler", "ballast-descheduler"} {
			if !strings.Contains(string(out), "pushed "+registry+"/"+repo+":") {
				t.Errorf("make push did not push %s:\n%s", repo, out)
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("install: every component Ready as real containers", func(t *testing.T) {
		begin := time.Now()
		out, err := ballast("install", "--root", t.TempDir(), "--timeout", "5m", "--registry", registry)
		figures.installToReady = time.Since(begin)
		if err != nil {
			t.Fatalf("ballast install: %v\n%s\n%s", err, out, describeNamespace(ctx, l.Client, ballastNamespace))
		}
		t.Logf("ballast install:\n%s", out)
		checkComponents(ctx, t, l.Client)
		checkImagesFrom(ctx, t, l.Client, registry)
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("load-watcher reports the real node", func(t *testing.T) {
		u := waitUsage(ctx, t, l.Client, func(n lwv1.NodeUsage) bool {
			m := n.Windows["1m"][usage.Memory]
			return m.Samples > 0 && m.Latest > 0
		})
		n := u.Nodes[lane.NodeName]
		if u.Source != "metrics-server" {
			t.Errorf("load-watcher's source = %q, want metrics-server", u.Source)
		}
		t.Logf("node %s: memory %.1f%% cpu %.1f%% (1m latest)", lane.NodeName,
			n.Windows["1m"][usage.Memory].Latest, n.Windows["1m"][usage.CPU].Latest)
		raw, err := proxyGet(ctx, l.Client, "/watcher")
		if err != nil {
			t.Fatalf("GET /watcher: %v", err)
		}
		if !bytes.Contains(raw, []byte(`"`+lane.NodeName+`"`)) {
			t.Errorf("/watcher does not report %s: %s", lane.NodeName, raw)
		}
	})

	t.Run("load-watcher follows metrics-server's scrapes", func(t *testing.T) {
		// Rounds creep towards the moment metrics-server publishes until one
		// finds nothing new, and a retry reads the scrape (docs/load-watcher.md,
		// Pacing): against the real metrics-server, some rounds come back
		// empty, and the rounds stay near one per period. The rate is read
		// over two minutes at least, so a retry early on does not decide it.
		var rounds map[string]float64
		var elapsed time.Duration
		poll(ctx, t, "a load-watcher round to find nothing new since metrics-server's last scrape", 4*time.Minute, func(ctx context.Context) (bool, string) {
			raw, err := l.Client.CoreV1().Services(ballastNamespace).ProxyGet("http", "ballast-load-watcher", "2021", "/metrics", nil).DoRaw(ctx)
			if err != nil {
				return false, err.Error()
			}
			var started float64
			rounds, started = samplingRounds(raw)
			if started == 0 {
				return false, "no process_start_time_seconds in load-watcher's /metrics"
			}
			elapsed = time.Since(time.Unix(int64(started), 0))
			return rounds["nothing_new"] >= 1 && rounds["new_samples"] >= 2 && elapsed >= 2*time.Minute,
				fmt.Sprintf("%v rounds in %s", rounds, elapsed.Round(time.Second))
		})
		// The first round comes at the start; the others after a wait each.
		total := rounds["new_samples"] + rounds["nothing_new"] + rounds["error"]
		perPeriod := (total - 1) / (elapsed.Seconds() / 15)
		t.Logf("load-watcher: %v rounds in %s since it started, %.2f per 15 s period", rounds, elapsed.Round(time.Second), perPeriod)
		// About 1.1 once it has found the scrapes, more in its first minutes
		// while it looks for them; a retry storm would be far above 2.
		if perPeriod > 2 {
			t.Errorf("load-watcher ran %.2f rounds per period, want at most 2", perPeriod)
		}
	})

	t.Run("ballast-scheduler binds an opted-in workload", func(t *testing.T) {
		d := deployment("opted-in", 2, ballastScheduler, "10Mi")
		if _, err := l.Client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods := waitPods(ctx, t, l.Client, "app=opted-in", 2, func(p corev1.Pod) bool {
			return p.Status.Phase == corev1.PodRunning
		})
		for _, p := range pods {
			if p.Spec.NodeName != lane.NodeName {
				t.Errorf("pod %s on %q, want %s", p.Name, p.Spec.NodeName, lane.NodeName)
			}
			if by := scheduledBy(ctx, t, l.Client, p); by != ballastScheduler {
				t.Errorf("pod %s was bound by %q, want %s", p.Name, by, ballastScheduler)
			}
		}
		// The next replica is estimated by what these two use: the
		// scheduler's own identity reads their PodMetrics from the real
		// metrics-server through the API server's aggregation layer.
		asScheduler := rest.CopyConfig(l.Config)
		asScheduler.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ballastNamespace + ":ballast-scheduler"}
		sched, err := kubernetes.NewForConfig(asScheduler)
		if err != nil {
			t.Fatal(err)
		}
		poll(ctx, t, "the scheduler to read the PodMetrics of "+pods[0].Name, 3*time.Minute, func(ctx context.Context) (bool, string) {
			raw, err := sched.CoreV1().RESTClient().Get().
				AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/" + pods[0].Name).DoRaw(ctx)
			if err != nil {
				return false, err.Error()
			}
			return bytes.Contains(raw, []byte(`"containers"`)), string(raw)
		})
	})

	t.Run("a memory hog makes the node unschedulable for Ballast only", func(t *testing.T) {
		node, err := l.Client.CoreV1().Nodes().Get(ctx, lane.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u := waitUsage(ctx, t, l.Client, func(lwv1.NodeUsage) bool { return true })
		now := u.Nodes[lane.NodeName].Windows["1m"][usage.Memory].Latest
		// Take the node to 96 % of allocatable: past the threshold with room
		// to spare for the noise of the other pods.
		alloc := node.Status.Allocatable.Memory().Value()
		hog := int64((96-now)/100*float64(alloc)) >> 20
		if hog <= 0 {
			t.Fatalf("the node already uses %.1f%% of its memory before the hog", now)
		}
		t.Logf("node at %.1f%% of %d MiB; the hog takes %d MiB", now, alloc>>20, hog)
		pod := hogPod(hog)
		if _, err := l.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPods(ctx, t, l.Client, "app=hog", 1, func(p corev1.Pod) bool { return podReady(p) })
		u = waitUsage(ctx, t, l.Client, func(n lwv1.NodeUsage) bool {
			return n.Windows["1m"][usage.Memory].Latest > memoryThreshold
		})
		t.Logf("load-watcher: node memory %.1f%% (latest)", u.Nodes[lane.NodeName].Windows["1m"][usage.Memory].Latest)
		// ballast-scheduler reads load-watcher every client.DefaultInterval:
		// give it a few reads to see what load-watcher serves now.
		time.Sleep(3 * lwclient.DefaultInterval)

		// The cluster's scheduler places by requests and still takes pods;
		// Ballast filters the node and says why.
		if _, err := l.Client.AppsV1().Deployments("default").Create(ctx, deployment("by-requests", 1, "", "10Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Client.AppsV1().Deployments("default").Create(ctx, deployment("by-usage", 1, ballastScheduler, "10Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPods(ctx, t, l.Client, "app=by-requests", 1, func(p corev1.Pod) bool { return p.Spec.NodeName == lane.NodeName })
		pending := waitPods(ctx, t, l.Client, "app=by-usage", 1, func(p corev1.Pod) bool { return p.Spec.NodeName == "" })
		msg := waitEvent(ctx, t, l.Client, pending[0], "FailedScheduling")
		if !strings.Contains(msg, "memory usage") || !strings.Contains(msg, "exceeds threshold 90") {
			t.Errorf("FailedScheduling does not say the node's memory is too busy: %q", msg)
		}
		// kube-scheduler formats the reason into the event: a '%' in it
		// comes out as "%!e(MISSING)".
		if strings.Contains(msg, "%!") {
			t.Errorf("FailedScheduling message is garbled: %q", msg)
		}
		t.Logf("ballast-scheduler: %s", msg)
	})

	t.Run("explain says why each pod is where it is", func(t *testing.T) {
		// A pod Ballast placed before the hog: no node was too busy then
		// (so no LoadAwarePlaced event); now the node is, for it too.
		placed := waitPods(ctx, t, l.Client, "app=opted-in", 2, func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		out, err := ballast("explain", "pod", "default/"+placed[0].Name)
		if err != nil {
			t.Fatalf("ballast explain pod %s: %v\n%s", placed[0].Name, err, out)
		}
		t.Logf("ballast explain pod %s:\n%s", placed[0].Name, out)
		for _, want := range []string{"Scheduled", "Successfully assigned default/" + placed[0].Name, "Now: no node can take it",
			"/ 90% (over)", "LoadAware: predicted memory usage"} {
			if !strings.Contains(out, want) {
				t.Errorf("ballast explain pod %s lacks %q", placed[0].Name, want)
			}
		}
		// The pod the hogged node was filtered off, Pending: LoadAware's
		// figures against the threshold, as the lane set them up.
		pending := waitPods(ctx, t, l.Client, "app=by-usage", 1, func(p corev1.Pod) bool { return p.Spec.NodeName == "" })
		out, err = ballast("explain", "pod", "default/"+pending[0].Name, "-o", "json")
		if err != nil {
			t.Fatalf("ballast explain pod %s: %v\n%s", pending[0].Name, err, out)
		}
		var ex explain.PodExplanation
		if err := json.Unmarshal([]byte(out), &ex); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		if ex.Now == nil || len(ex.Now.Best) != 0 || len(ex.Now.Nodes) == 0 {
			t.Fatalf("explanation of the Pending pod: %+v", ex.Now)
		}
		n := ex.Now.Nodes[0]
		if n.Name != lane.NodeName || n.Rejected == nil || n.Rejected.Plugin != "LoadAware" || n.Load == nil {
			t.Fatalf("node %s: rejected %+v, load %+v; want LoadAware to reject it with its figures", n.Name, n.Rejected, n.Load)
		}
		for _, r := range n.Load.Resources {
			if r.Resource == usage.Memory && (r.Current < memoryThreshold || r.Threshold != memoryThreshold || !r.Over) {
				t.Errorf("memory figures %+v: want the hog's %.0f %%+ against the %g %% threshold, over", r, 96.0, memoryThreshold)
			}
		}
		if !slices.ContainsFunc(ex.Events, func(e explain.Event) bool { return e.Reason == "FailedScheduling" }) {
			t.Errorf("the Pending pod's events lack FailedScheduling: %+v", ex.Events)
		}
		// The node, as the scheduler and the descheduler judge it.
		out, err = ballast("explain", "node", lane.NodeName)
		if err != nil {
			t.Fatalf("ballast explain node: %v\n%s", err, out)
		}
		t.Logf("ballast explain node %s:\n%s", lane.NodeName, out)
		for _, want := range []string{"Scheduler (window 5m): gets no new pod: memory", "Descheduler (window 5m): hot: memory"} {
			if !strings.Contains(out, want) {
				t.Errorf("ballast explain node lacks %q", want)
			}
		}
	})

	t.Run("status shows the node's usage", func(t *testing.T) {
		out, err := ballast("status")
		if err != nil {
			t.Fatalf("ballast status: %v\n%s", err, out)
		}
		t.Logf("ballast status:\n%s", out)
		// The node's row carries its usage and the age of its newest
		// sample, not "never" or "stale".
		var row string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, lane.NodeName+" ") {
				row = line
			}
		}
		if !strings.Contains(row, "%") || !strings.HasSuffix(row, " ago") {
			t.Errorf("ballast status shows no fresh usage of node %s: row %q", lane.NodeName, row)
		}
		// Through the kubelet into load-watcher's pod, which its
		// NetworkPolicy does not block wherever the pod runs.
		if !strings.Contains(out, "reached by port-forward to pod") {
			t.Errorf("ballast status did not reach load-watcher through a port-forward")
		}
	})

	figures.memory = containerMemory(ctx, t, l)

	t.Run("uninstall leaves nothing behind", func(t *testing.T) {
		out, err := ballast("uninstall", "--root", t.TempDir())
		if err != nil {
			t.Fatalf("ballast uninstall: %v\n%s", err, out)
		}
		t.Logf("ballast uninstall:\n%s", out)
		left := waitNothingLeft(ctx, t, l)
		if len(left) > 0 {
			t.Errorf("left after uninstall: %s", strings.Join(left, ", "))
		}
	})
}

// env is what `make e2e` hands the test.
type env struct {
	bin, ballast string
	images       []string
	addons       [][]byte
	figures      string
	keep         bool
}

func loadEnv(t *testing.T) env {
	t.Helper()
	e := env{
		bin:     os.Getenv("BALLAST_E2E_BIN"),
		ballast: os.Getenv("BALLAST_E2E_CLI"),
		figures: os.Getenv("BALLAST_E2E_FIGURES"),
		keep:    os.Getenv("BALLAST_E2E_KEEP") != "",
	}
	if e.bin == "" || e.ballast == "" || os.Getenv("BALLAST_E2E_IMAGES") == "" {
		t.Fatal("run through `make e2e`: BALLAST_E2E_BIN, BALLAST_E2E_CLI and BALLAST_E2E_IMAGES are unset")
	}
	e.images = strings.Split(os.Getenv("BALLAST_E2E_IMAGES"), ",")
	manifests, err := filepath.Glob("manifests/*.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no addon manifests in e2e/manifests (%v)", err)
	}
	slices.Sort(manifests)
	for _, m := range manifests {
		raw, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		e.addons = append(e.addons, raw)
	}
	return e
}

// laneImages are the archives the lane's nodes import: the lane's own
// images, not Ballast's, which a user's nodes pull from a registry.
func (e env) laneImages() []string {
	var imgs []string
	for _, img := range e.images {
		if !strings.HasPrefix(filepath.Base(img), "ballast-images-") {
			imgs = append(imgs, img)
		}
	}
	return imgs
}

// checkImagesFrom checks that every Ballast container runs an image of
// registry, pulled from it: no node had it before.
func checkImagesFrom(ctx context.Context, t *testing.T, c kubernetes.Interface, registry string) {
	t.Helper()
	pods, err := c.CoreV1().Pods(ballastNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, st := range p.Status.ContainerStatuses {
			if !strings.HasPrefix(st.Image, registry+"/") || st.ImageID == "" {
				t.Errorf("%s/%s runs image %q (id %q), want one pulled from %s", p.Name, st.Name, st.Image, st.ImageID, registry)
			}
		}
	}
}

// deployment is a Deployment of the lane's pause image (never pulled), with
// a quick exit and the restricted security context.
func deployment(name string, replicas int32, schedulerName, memory string) *appsv1.Deployment {
	return objects.MakeDeployment(name).Replicas(replicas).SchedulerName(schedulerName).
		Image(lane.SandboxImage, corev1.PullNever).Requests("10m", memory).GracePeriod(1).
		SecurityContext(restricted()).Obj()
}

// hogPod holds mib MiB of memory while requesting almost nothing: the kind
// of process request-based scheduling cannot see.
func hogPod(mib int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: "default", Labels: map[string]string{"app": "hog"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "hog", Image: hogImage, ImagePullPolicy: corev1.PullNever,
				Args: []string{"--memory", fmt.Sprintf("%dMi", mib)},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
				SecurityContext: restricted(),
			}},
		},
	}
}

func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
		ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// poll runs cond every second until it holds or timeout passes, then fails
// the test with what the last attempt saw.
func poll(ctx context.Context, t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		ok, seen := cond(ctx)
		last = seen
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting %s for %s: %v; last seen: %s", timeout, what, err, last)
	}
}

func waitPods(ctx context.Context, t *testing.T, c kubernetes.Interface, selector string, n int, ok func(corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	return waitPodsIn(ctx, t, c, "default", selector, n, ok)
}

// waitPodsIn waits until n pods of namespace that match selector pass ok.
func waitPodsIn(ctx context.Context, t *testing.T, c kubernetes.Interface, namespace, selector string, n int, ok func(corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	return waitPodsFor(ctx, t, c, namespace, selector, n, 3*time.Minute, ok)
}

// waitPodsFor is waitPodsIn with its own timeout.
func waitPodsFor(ctx context.Context, t *testing.T, c kubernetes.Interface, namespace, selector string, n int, timeout time.Duration, ok func(corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	poll(ctx, t, fmt.Sprintf("%d pods %s in %s", n, selector, namespace), timeout, func(ctx context.Context) (bool, string) {
		list, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		pods = pods[:0]
		var seen []string
		for _, p := range list.Items {
			seen = append(seen, fmt.Sprintf("%s %s node=%q", p.Name, p.Status.Phase, p.Spec.NodeName))
			if p.DeletionTimestamp == nil && ok(p) {
				pods = append(pods, p)
			}
		}
		return len(pods) >= n, strings.Join(seen, "; ")
	})
	return pods
}

// scheduledBy names the scheduler whose Scheduled event bound pod.
func scheduledBy(ctx context.Context, t *testing.T, c kubernetes.Interface, pod corev1.Pod) string {
	t.Helper()
	var by string
	poll(ctx, t, "the Scheduled event of "+pod.Name, time.Minute, func(ctx context.Context) (bool, string) {
		ev, err := c.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + pod.Name + ",reason=Scheduled"})
		if err != nil || len(ev.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		e := ev.Items[0]
		by = e.ReportingController
		if by == "" {
			by = e.Source.Component
		}
		return true, ""
	})
	return by
}

func waitEvent(ctx context.Context, t *testing.T, c kubernetes.Interface, pod corev1.Pod, reason string) string {
	t.Helper()
	var msg string
	poll(ctx, t, reason+" for "+pod.Name, 2*time.Minute, func(ctx context.Context) (bool, string) {
		ev, err := c.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + pod.Name + ",reason=" + reason})
		if err != nil || len(ev.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		msg = ev.Items[len(ev.Items)-1].Message
		return true, ""
	})
	return msg
}

func waitNodeMetrics(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	t.Helper()
	poll(ctx, t, "metrics.k8s.io to report "+lane.NodeName, 3*time.Minute, func(ctx context.Context) (bool, string) {
		raw, err := c.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes/" + lane.NodeName).DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		return bytes.Contains(raw, []byte(`"memory"`)), string(raw)
	})
}

// proxyGet reads path from load-watcher through the API server's service
// proxy, as `ballast status` does.
func proxyGet(ctx context.Context, c kubernetes.Interface, path string) ([]byte, error) {
	return c.CoreV1().Services(ballastNamespace).ProxyGet("http", "ballast-load-watcher", "2020", path, nil).DoRaw(ctx)
}

// waitUsage polls /api/v1/usage until the node is reported, fresh, and ok
// holds for it.
func waitUsage(ctx context.Context, t *testing.T, c kubernetes.Interface, ok func(lwv1.NodeUsage) bool) lwv1.UsageList {
	t.Helper()
	var u lwv1.UsageList
	poll(ctx, t, "load-watcher to report "+lane.NodeName, 3*time.Minute, func(ctx context.Context) (bool, string) {
		raw, err := proxyGet(ctx, c, lwv1.Path)
		if err != nil {
			return false, err.Error()
		}
		if err := json.Unmarshal(raw, &u); err != nil {
			return false, err.Error()
		}
		n, found := u.Nodes[lane.NodeName]
		return found && !n.Stale && ok(n), string(raw)
	})
	return u
}

// checkComponents asserts that the three Deployments run Ready containers
// under the chart's restricted security context, which the test leaves as
// the chart sets it.
func checkComponents(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	t.Helper()
	pods, err := c.CoreV1().Pods(ballastNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	components := map[string]bool{}
	for _, p := range pods.Items {
		components[p.Labels["app.kubernetes.io/name"]] = true
		if !podReady(p) {
			t.Errorf("pod %s is not Ready", p.Name)
		}
		psc := p.Spec.SecurityContext
		if psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil ||
			psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("pod %s: security context %+v is not the chart's restricted one", p.Name, psc)
		}
		for _, ctr := range p.Spec.Containers {
			sc := ctr.SecurityContext
			if sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
				ptr.Deref(sc.Privileged, false) {
				t.Errorf("container %s/%s: security context %+v is not restricted", p.Name, ctr.Name, sc)
			}
			// Every component is probed for liveness; load-watcher and the
			// scheduler serve requests, so they are probed for readiness too.
			if ctr.LivenessProbe == nil {
				t.Errorf("container %s/%s has no liveness probe", p.Name, ctr.Name)
			}
			if name := p.Labels["app.kubernetes.io/name"]; name != "descheduler" && ctr.ReadinessProbe == nil {
				t.Errorf("container %s/%s serves requests but has no readiness probe", p.Name, ctr.Name)
			}
		}
		for _, st := range p.Status.ContainerStatuses {
			if !st.Ready || st.RestartCount > 0 {
				t.Errorf("container %s/%s: ready=%t restarts=%d", p.Name, st.Name, st.Ready, st.RestartCount)
			}
		}
	}
	for _, want := range []string{"load-watcher", "scheduler", "descheduler"} {
		if !components[want] {
			t.Errorf("no %s pod in %s (have %v)", want, ballastNamespace, components)
		}
	}
}

func describeNamespace(ctx context.Context, c kubernetes.Interface, ns string) string {
	var b strings.Builder
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s %s node=%q\n", p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, st := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "  %s ready=%t restarts=%d state=%+v\n", st.Name, st.Ready, st.RestartCount, st.State)
		}
	}
	ev, _ := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	for _, e := range ev.Items {
		fmt.Fprintf(&b, "event %s %s: %s\n", e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}

// samplingRounds reads load_watcher_sampling_rounds_total by result and
// process_start_time_seconds from load-watcher's /metrics text.
func samplingRounds(metrics []byte) (map[string]float64, float64) {
	rounds := map[string]float64{}
	var started float64
	for _, line := range strings.Split(string(metrics), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(fields[1], &v); err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(fields[0], "load_watcher_sampling_rounds_total{"):
			for _, result := range []string{"new_samples", "nothing_new", "error"} {
				if strings.Contains(fields[0], `result="`+result+`"`) {
					rounds[result] = v
				}
			}
		case fields[0] == "process_start_time_seconds":
			started = v
		}
	}
	return rounds, started
}
