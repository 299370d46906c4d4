package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/objects"
	"github.com/ballast-sched/ballast/load-watcher/pkg/api/watcher"
	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// serveScenario samples every second; api pods use a whole CPU and 1Gi
// each, far above their requests.
const serveScenario = `
name: serve
duration: 10m
step: 1s
seed: 3
nodes:
- {name: node-1, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-2, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
workloads:
- name: api
  replicas: 2
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: constant, value: "1"}
    memory: {type: constant, value: 1Gi}
events:
- {at: 2s, type: cordon, node: node-2}
`

// TestServeWithExternalScheduler serves a cluster with no scheduler, binds
// the scenario's pods and a Deployment of its own as an external scheduler
// would, reads usage over load-watcher's HTTP API, and checks shutdown
// leaves nothing behind.
func TestServeWithExternalScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	tmp := t.TempDir()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	// Every temporary file of the stack, kube-apiserver's included, goes here.
	t.Setenv("TMPDIR", tmp)
	before := stackGoroutines()
	sc, err := scenario.Parse([]byte(serveScenario))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := Serve(ctx, sc, ServeOptions{Scheduler: ModeNone, KubeconfigOut: kubeconfig, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx) //nolint:errcheck // a failed test still stops the cluster

	if fi, err := os.Stat(kubeconfig); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %s: %v, mode %v; want mode 0600", kubeconfig, err, fi.Mode())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	if _, err := client.AppsV1().Deployments("default").Create(ctx, objects.MakeDeployment("web").Replicas(2).Container("web").Image("registry.invalid/web", "").Requests("500m", "256Mi").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitForPods(ctx, t, client, 4, func(p *corev1.Pod) bool { return true })
	for _, p := range pods {
		if p.Spec.NodeName != "" || len(p.Status.Conditions) != 0 {
			t.Fatalf("pod %s was handled by a scheduler with --scheduler none: node %q, conditions %v", p.Name, p.Spec.NodeName, p.Status.Conditions)
		}
		node := "node-2"
		if p.Labels["app"] == "api" {
			node = "node-1"
		}
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		if err := client.CoreV1().Pods(p.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("binding %s to %s: %v", p.Name, node, err)
		}
	}
	waitForPods(ctx, t, client, 4, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "node-2", metav1.GetOptions{})
		return err == nil && n.Spec.Unschedulable, nil
	})
	if err != nil {
		t.Fatalf("the cordon event at 2s never happened: %v", err)
	}

	// node-1: 200m + 2 api pods × 1 CPU = 2.2 of 4 → 55%; 1Gi + 2 × 1Gi of 8Gi → 37.5%.
	// node-2: 200m + 2 web pods at their 500m requests = 1.2 of 4 → 30%; 1Gi + 2 × 256Mi → 18.75%.
	want := map[string][2]float64{"node-1": {55, 37.5}, "node-2": {30, 18.75}}
	waitForUsage(ctx, t, srv.LoadWatcher, want)
	checkWatcher(t, srv.LoadWatcher, want)

	p, err := Report(ctx, client, "")
	if err != nil {
		t.Fatal(err)
	}
	checkPlacement(t, "report", p)
	// Without the published address the report asks for one, and works
	// when given it.
	if err := client.CoreV1().ConfigMaps(record.InfoNamespace).Delete(ctx, record.InfoName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Report(ctx, client, ""); err == nil || !strings.Contains(err.Error(), "give load-watcher's address") {
		t.Errorf("report without %s/%s: err = %v, want a request for the address", record.InfoNamespace, record.InfoName, err)
	}
	if p, err = Report(ctx, client, srv.LoadWatcher); err != nil {
		t.Fatal(err)
	}
	checkPlacement(t, "report at an explicit address", p)
	final, err := srv.Shutdown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkPlacement(t, "shutdown", final)
	checkNothingLeft(t, srv, kubeconfig, tmp, before)
}

// waitForPods waits until exactly n pods exist and all satisfy ok.
func waitForPods(ctx context.Context, t *testing.T, client kubernetes.Interface, n int, ok func(*corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pods = list.Items
		for i := range pods {
			if !ok(&pods[i]) {
				return false, nil
			}
		}
		return len(pods) == n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d pods: %v; have %d", n, err, len(pods))
	}
	return pods
}

// waitForUsage waits until /api/v1/usage reports the wanted latest CPU and
// memory percentages for every node.
func waitForUsage(ctx context.Context, t *testing.T, loadWatcher string, want map[string][2]float64) {
	t.Helper()
	var last apiv1.UsageList
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if err := getJSON(loadWatcher+apiv1.Path, &last); err != nil {
			return false, nil
		}
		for node, w := range want {
			stats := last.Nodes[node].Windows["1m"]
			if last.Nodes[node].Stale || math.Abs(stats["cpu"].Latest-w[0]) > 0.1 || math.Abs(stats["memory"].Latest-w[1]) > 0.1 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("load-watcher never reported %v: %v; last answer %+v", want, err, last.Nodes)
	}
}

// checkWatcher checks the paypal/load-watcher compatible /watcher answer.
func checkWatcher(t *testing.T, loadWatcher string, want map[string][2]float64) {
	t.Helper()
	var got watcher.WatcherMetrics
	if err := getJSON(loadWatcher+"/watcher", &got); err != nil {
		t.Fatal(err)
	}
	for node, w := range want {
		var latest float64
		for _, m := range got.Data.NodeMetricsMap[node].Metrics {
			if m.Type == watcher.TypeCPU && m.Operator == watcher.OperatorLatest {
				latest = m.Value
			}
		}
		if math.Abs(latest-w[0]) > 0.1 {
			t.Errorf("/watcher: %s latest CPU %.2f%%, want %.2f%%", node, latest, w[0])
		}
	}
}

func getJSON(u string, into any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// checkPlacement checks the nodes a report or the shutdown measured.
func checkPlacement(t *testing.T, what string, p *record.Placement) {
	t.Helper()
	type node struct {
		Pods        int
		Workloads   map[string]int
		CPURequests float64
		Cordoned    bool
		NoUsage     bool
	}
	got := map[string]node{}
	for _, n := range p.Summary.Final {
		got[n.Node] = node{n.Pods, n.Workloads, n.CPURequests, n.Cordoned, n.NoUsage}
		// Usage rose from the background (5%) when the pods were bound.
		if n.CPU <= 5 {
			t.Errorf("%s: %s CPU used %.1f%%, want above the 5%% background", what, n.Node, n.CPU)
		}
	}
	// Requests: 2 × 100m of 4 CPUs → 5%; 2 × 500m → 25%.
	want := map[string]node{
		"node-1": {Pods: 2, Workloads: map[string]int{"api": 2}, CPURequests: 5},
		"node-2": {Pods: 2, Workloads: map[string]int{record.OtherWorkload: 2}, CPURequests: 25, Cordoned: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: nodes (-want,+got):\n%s", what, diff)
	}
	if p.Summary.Pending != 0 || p.Summary.Hottest != "node-1" {
		t.Errorf("%s: pending %d, hottest %q; want 0 and node-1", what, p.Summary.Pending, p.Summary.Hottest)
	}
}

// checkNothingLeft checks that shutdown closed every port, removed the
// kubeconfig and every temporary file, and stopped every goroutine the
// stack started.
func checkNothingLeft(t *testing.T, srv *Server, kubeconfig, tmp string, before map[string]bool) {
	t.Helper()
	for _, u := range []string{srv.APIServer, srv.LoadWatcher, srv.MetricsAPI} {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err := net.DialTimeout("tcp", parsed.Host, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after shutdown", u)
		}
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig is still there after shutdown: %v", err)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("temporary files left after shutdown: %v %v", left, err)
	}
	var leaked []string
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		leaked = leaked[:0]
		for id, stack := range stackGoroutinesWithStacks() {
			if !before[id] {
				leaked = append(leaked, stack)
			}
		}
		return len(leaked) == 0, nil
	})
	if len(leaked) != 0 {
		t.Errorf("%d goroutines of the stack still run after shutdown; the first:\n%s", len(leaked), leaked[0])
	}
}

// stackGoroutines are the IDs of the goroutines running or started by
// Ballast code.
func stackGoroutines() map[string]bool {
	out := map[string]bool{}
	for id := range stackGoroutinesWithStacks() {
		out[id] = true
	}
	return out
}

func stackGoroutinesWithStacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "github.com/ballast-sched/ballast/") {
			continue
		}
		id, _, _ := strings.Cut(g, " [")
		out[id] = g
	}
	return out
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestValidateServeOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts ServeOptions
		want field.ErrorList
	}{
		{name: "valid", opts: ServeOptions{Scheduler: ModeNone, Speed: 10, KubeconfigOut: "k", DeschedulerEvery: time.Minute}},
		{
			name: "all wrong",
			opts: ServeOptions{Scheduler: "fast", Speed: -1, DeschedulerEvery: -time.Second},
			want: field.ErrorList{
				field.NotSupported[string](field.NewPath("serve", "scheduler"), "fast", nil),
				field.Invalid(field.NewPath("serve", "speed"), nil, ""),
				field.Required(field.NewPath("serve", "kubeconfigOut"), ""),
				field.Invalid(field.NewPath("serve", "deschedulerEvery"), nil, ""),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate(field.NewPath("serve"))
			var got field.ErrorList
			if err != nil {
				for _, e := range err.(interface{ Errors() []error }).Errors() {
					got = append(got, e.(*field.Error))
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestServeKeepsForeignKubeconfig: a file a served cluster did not write
// is refused before anything starts, and left as it was.
func TestServeKeepsForeignKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	foreign := "apiVersion: v1\nkind: Config\ncurrent-context: home\n"
	if err := os.WriteFile(path, []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse([]byte(serveScenario))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Serve(context.Background(), sc, ServeOptions{KubeconfigOut: path})
	if err == nil || !strings.Contains(err.Error(), "not a kubeconfig written by a served simulation") {
		t.Errorf("err = %v, want a refusal to overwrite", err)
	}
	if data, _ := os.ReadFile(path); string(data) != foreign {
		t.Errorf("the file changed:\n%s", data)
	}
}

func TestEventText(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   scenario.Event
		want string
	}{
		{"scale", scenario.Event{Type: scenario.Scale, Workload: "api", Replicas: 30}, "scale api to 30"},
		{"hog on memory only", scenario.Event{Type: scenario.Hog, Node: "n", Resources: scenario.Resources{Memory: resource.MustParse("6Gi")}}, "hog on n eats memory 6Gi"},
		{"hog on both", scenario.Event{Type: scenario.Hog, Node: "n", Resources: scenario.Resources{CPU: resource.MustParse("2"), Memory: resource.MustParse("1Gi")}}, "hog on n eats cpu 2 and memory 1Gi"},
		{"cordon", scenario.Event{Type: scenario.Cordon, Node: "n"}, "cordon n"},
		{"reboot", scenario.Event{Type: scenario.Reboot, Node: "n", For: metav1.Duration{Duration: 8 * time.Minute}}, "reboot n: down for 8m0s"},
		{"power loss", scenario.Event{Type: scenario.PowerLoss, Node: "n"}, "power loss on n: down for good"},
		{"drain", scenario.Event{Type: scenario.Drain, Node: "n"}, "drain n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eventText(tc.ev); got != tc.want {
				t.Errorf("eventText = %q, want %q", got, tc.want)
			}
		})
	}
}

// recordScenario samples every second; node-2 is hogged from the start, so
// every pod bound there lands on the hog.
const recordScenario = `
name: record
duration: 8s
step: 1s
seed: 3
nodes:
- {name: node-1, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-2, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
workloads:
- name: api
  replicas: 2
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: constant, value: 500m}
    memory: {type: constant, value: 512Mi}
events:
- {at: 0s, type: hog, node: node-2, resources: {cpu: "1"}}
- {at: 2s, type: scale, workload: api, replicas: 6}
`

// TestServeRecords serves a scenario with Record on and checks the record
// a run on the simulated clock would keep: a step per sampling round up to
// the scenario's end, and the pods placed on the hog.
func TestServeRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	sc, err := scenario.Parse([]byte(recordScenario))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := Serve(ctx, sc, ServeOptions{Scheduler: ModeDefault, Record: true,
		KubeconfigOut: filepath.Join(t.TempDir(), "kubeconfig"), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx) //nolint:errcheck // a failed test still stops the cluster
	if srv.Result() != nil {
		t.Errorf("a result before shutdown")
	}
	select {
	case <-srv.Recorded():
	case <-time.After(time.Minute):
		t.Fatal("the record never reached the scenario's end")
	}
	if _, err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r := srv.Result()
	if r == nil {
		t.Fatal("no result after shutdown")
	}
	// Step 0 at the start, then one per sampling round. The scenario's clock
	// starts with the control plane, a few seconds before the first round.
	n := len(r.Steps)
	if n < 3 || r.Steps[0].At != 0 || r.Steps[n-1].At < sc.Duration.Duration {
		t.Fatalf("recorded %d steps from %v to %v, want at least 3 from 0s to at least %v", n, r.Steps[0].At, r.Steps[n-1].At, sc.Duration.Duration)
	}
	for i := 1; i < n; i++ {
		if r.Steps[i].At <= r.Steps[i-1].At {
			t.Errorf("step %d at %v does not follow step %d at %v", i, r.Steps[i].At, i-1, r.Steps[i-1].At)
		}
	}
	pods := podsPerNode(r.Summary.Final)
	if pods["node-1"]+pods["node-2"] != 6 || r.Summary.Pending != 0 {
		t.Errorf("pods at the end %v, %d pending; want all 6 placed", pods, r.Summary.Pending)
	}
	// Nothing moves pods: every pod on node-2 landed there while hogged.
	if r.PlacedOnHog != pods["node-2"] {
		t.Errorf("placed on the hog %d, want the %d pods on node-2", r.PlacedOnHog, pods["node-2"])
	}
	if r.Summary.Spread == 0 || r.Summary.Hottest == "" {
		t.Errorf("summary %+v, want it computed", r.Summary)
	}
}

func podsPerNode(nodes []record.NodeStep) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[n.Node] = n.Pods
	}
	return out
}
