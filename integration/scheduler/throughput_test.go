package integration

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
	"github.com/ballast-sched/ballast/scheduler/config"
)

const (
	// benchPods is how many pods each round schedules.
	benchPods = 5000
	// benchRounds is how many times each profile runs by default
	// (BALLAST_BENCH_ROUNDS overrides it). Profiles take turns within a
	// round, and the first of each round rotates, so no profile always runs
	// on a colder or warmer machine; the ratio of medians then cancels most
	// of what other processes on the machine do to single rounds.
	benchRounds = 5
	// noOpPluginsEnv makes the scheduler process add noOpScore and
	// noOpLoad to its plugins, for the profiles that enable them.
	noOpPluginsEnv = "BALLAST_BENCH_NOOP_PLUGINS"
)

// benchSizes are the cluster sizes measured by default
// (BALLAST_BENCH_NODES, a comma-separated list, overrides them).
var benchSizes = []int{500, 5000}

// throughputConfig is one scheduler profile, reaching the cluster through
// kubeconfig with a client fast enough that API rate limits do not cap the
// measurement.
func throughputConfig(kubeconfig, profile string) string {
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: ` + kubeconfig + `
  qps: 5000
  burst: 5000
profiles:
` + profile
}

// noOpScore scores every node alike and, unlike every in-tree plugin, does
// not implement fwk.SignPlugin: a profile that enables it runs without
// kube-scheduler's opportunistic batching, and nothing else changes.
type noOpScore struct{}

func (noOpScore) Name() string { return "NoOpScore" }

func (noOpScore) Score(context.Context, fwk.CycleState, *corev1.Pod, fwk.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func (noOpScore) ScoreExtensions() fwk.ScoreExtensions { return nil }

// noOpLoad runs at every extension point LoadAware runs at in the shipped
// profile (PreFilter, Filter, PostFilter, PreScore, Score, Reserve), signs
// pods as LoadAware does, and does nothing at any of them: what
// kube-scheduler's framework spends on one more such plugin, the least any
// load-aware plugin costs whatever it computes.
type noOpLoad struct{}

var (
	_ fwk.PreFilterPlugin  = noOpLoad{}
	_ fwk.FilterPlugin     = noOpLoad{}
	_ fwk.PostFilterPlugin = noOpLoad{}
	_ fwk.PreScorePlugin   = noOpLoad{}
	_ fwk.ScorePlugin      = noOpLoad{}
	_ fwk.ReservePlugin    = noOpLoad{}
	_ fwk.SignPlugin       = noOpLoad{}
)

func (noOpLoad) Name() string { return "NoOpLoad" }

func (noOpLoad) SignPod(context.Context, *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}

func (noOpLoad) PreFilter(context.Context, fwk.CycleState, *corev1.Pod, []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, nil
}

func (noOpLoad) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func (noOpLoad) Filter(context.Context, fwk.CycleState, *corev1.Pod, fwk.NodeInfo) *fwk.Status {
	return nil
}

func (noOpLoad) PostFilter(context.Context, fwk.CycleState, *corev1.Pod, fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

func (noOpLoad) PreScore(context.Context, fwk.CycleState, *corev1.Pod, []fwk.NodeInfo) *fwk.Status {
	return nil
}

func (noOpLoad) Score(context.Context, fwk.CycleState, *corev1.Pod, fwk.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func (noOpLoad) ScoreExtensions() fwk.ScoreExtensions { return nil }

func (noOpLoad) Reserve(context.Context, fwk.CycleState, *corev1.Pod, string) *fwk.Status { return nil }

func (noOpLoad) Unreserve(context.Context, fwk.CycleState, *corev1.Pod, string) {}

// noOpPlugins registers noOpScore and noOpLoad.
func noOpPlugins() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		"NoOpScore": func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return noOpScore{}, nil },
		"NoOpLoad":  func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return noOpLoad{}, nil },
	}
}

// throughputProfile is one scheduler configuration the benchmark times.
type throughputProfile struct {
	name      string
	scheduler string
	profile   string
	env       []string
}

// throughputProfiles are the profiles BALLAST_BENCH_PROFILES (a
// comma-separated list) names; by default default, default+no-op and
// ballast.
func throughputProfiles(b *testing.B) []throughputProfile {
	ballast, err := config.Shipped("ballast-scheduler.yaml")
	if err != nil {
		b.Fatal(err)
	}
	all := []throughputProfile{
		{name: "default", scheduler: "default-scheduler", profile: "- schedulerName: default-scheduler\n"},
		{name: "default+unsigned", scheduler: "default-scheduler",
			profile: "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n      - name: NoOpScore\n",
			env:     []string{noOpPluginsEnv + "=1"}},
		// The default profile plus a plugin at LoadAware's extension points
		// that does nothing (noOpLoad).
		{name: "default+no-op", scheduler: "default-scheduler",
			profile: "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n      - name: NoOpLoad\n",
			env:     []string{noOpPluginsEnv + "=1"}},
		{name: "ballast", scheduler: "ballast-scheduler", profile: ballast[strings.Index(ballast, "- schedulerName:"):]},
		// Ballast without the LoadAwarePlaced event of every placement.
		{name: "ballast-no-events", scheduler: "ballast-scheduler",
			profile: strings.Replace(ballast[strings.Index(ballast, "- schedulerName:"):], "  - name: LoadAware\n    args:\n",
				"  - name: LoadAware\n    args:\n      placementEvents: false\n", 1)},
	}
	if !strings.Contains(all[4].profile, "placementEvents: false") {
		b.Fatalf("ballast-no-events: config/ballast-scheduler.yaml has no LoadAware args to turn the events off in")
	}
	want := "default,default+no-op,ballast"
	if v := os.Getenv("BALLAST_BENCH_PROFILES"); v != "" {
		want = v
	}
	var out []throughputProfile
	for _, name := range strings.Split(want, ",") {
		i := slices.IndexFunc(all, func(p throughputProfile) bool { return p.name == name })
		if i < 0 {
			b.Fatalf("BALLAST_BENCH_PROFILES names %q; known: default, default+unsigned, default+no-op, ballast, ballast-no-events", name)
		}
		out = append(out, all[i])
	}
	if out[0].name != "default" {
		b.Fatalf("BALLAST_BENCH_PROFILES=%q: the first must be default, the profile the others are compared with", want)
	}
	return out
}

// BenchmarkSchedulingThroughput compares the ballast-scheduler profile (as
// shipped) with kube-scheduler's default profile on in-process clusters of
// 500 and 5 000 nodes. Each profile runs as ballast-scheduler does: a
// process of its own (this test binary, run as the command), reading the
// cluster's API server and, for Ballast, load-watcher's API, which serves a
// collector fed by the static provider at load-watcher's default period.
// Each round creates 5 000 pods while no scheduler runs, starts the
// scheduler and times from the first binding to the last, as a watch sees
// them; it reads the scheduler process's CPU time at both, which gives the
// CPU per scheduled pod. A third profile,
// default+unsigned (the default one plus a score plugin that does nothing
// and does not sign pods), shows what losing opportunistic batching alone
// costs; default+no-op (the default one plus a plugin at LoadAware's
// extension points that signs pods and does nothing) is the least any
// load-aware plugin could cost. BALLAST_BENCH_PROFILES picks the profiles
// (default,default+no-op,ballast unless set).
// ballast-no-events is Ballast without its placement events
// (placementEvents: false), to measure what they cost.
// Run with -benchtime=1x: one iteration is one full comparison of
// BALLAST_BENCH_ROUNDS rounds (default 5) at each size.
// BALLAST_BENCH_CPUPROFILES=<dir> writes each scheduler process's CPU
// profile (go tool pprof <the test binary> <file>) and log there.
func BenchmarkSchedulingThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a control plane; skipped with -short")
	}
	sizes := benchSizes
	if v := os.Getenv("BALLAST_BENCH_NODES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("BALLAST_BENCH_NODES=%q: want node counts, comma-separated", v)
			}
			sizes = append(sizes, n)
		}
	}
	rounds := benchRounds
	if v := os.Getenv("BALLAST_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BALLAST_BENCH_ROUNDS=%q: want a whole number of at least 1", v)
		}
		rounds = n
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchmarkThroughput(b, n, rounds) })
	}
}

func benchmarkThroughput(b *testing.B, nodes, rounds int) {
	// The load average before anything starts is the machine's own; once
	// the benchmark runs it keeps two cores busy itself.
	loadBefore := loadAverage(b)
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cluster.Start(b, cluster.Options{ControllerWorkers: 1})
	if err != nil {
		b.Fatal(err)
	}
	usage := static.New()
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
		mem := 20 + float64(i*53%50)
		if i%20 == 0 {
			mem = 95 // a few nodes above the memory threshold, so the filter works too
		}
		usage.Set(names[i], 10+float64(i*37%50), mem)
	}
	// Nodes join in order, as the scheduler learns of them.
	for _, name := range names {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: name, CPU: "8", Memory: "16Gi"}); err != nil {
			b.Fatal(err)
		}
	}
	fast := rest.CopyConfig(c.RestConfig)
	fast.QPS, fast.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(fast)
	if err != nil {
		b.Fatal(err)
	}
	// load-watcher samples at its own default period, as the chart runs it:
	// the scheduler's client asks every 5 s and, between two rounds, is
	// answered that nothing changed.
	address := serveStaticUsage(b, ctx, c, usage, collector.DefaultPeriod)
	dir := b.TempDir()
	profiles := throughputProfiles(b)
	configs := map[string]string{}
	for _, p := range profiles {
		configs[p.name] = filepath.Join(dir, strings.ReplaceAll(p.name, "+", "-")+".yaml")
		if err := os.WriteFile(configs[p.name], []byte(throughputConfig(c.KubeconfigPath(), p.profile)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("%d nodes ready in %v\n", nodes, time.Since(start).Round(time.Second))

	for i := 0; i < b.N; i++ {
		usedBefore := cpuUse(b)
		rates, cpu := map[string][]float64{}, map[string][]float64{}
		for round := 0; round < rounds; round++ {
			for k := range profiles {
				p := profiles[(round+k)%len(profiles)]
				ns := fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(p.name, "+", "-"), i, round)
				args := []string{"--config=" + configs[p.name], "--secure-port=0", "--load-watcher-address=" + address}
				env, logDir := p.env, dir
				if profiles := os.Getenv("BALLAST_BENCH_CPUPROFILES"); profiles != "" {
					env = append(slices.Clone(env), cpuProfileEnv+"="+filepath.Join(profiles, fmt.Sprintf("nodes-%d-%s.pprof", nodes, ns)))
					logDir = profiles
				}
				r := scheduleAll(b, ctx, client, args, env, filepath.Join(logDir, fmt.Sprintf("nodes-%d-%s.log", nodes, ns)), p.scheduler, ns)
				// Printed rather than logged: the cluster's own log lines would
				// push a benchmark's log past what go test shows.
				fmt.Printf("round %d, %s profile: %.0f pods/s, %.2f ms of CPU per pod\n", round, p.name, r.rate, r.cpuPerPod*1000)
				rates[p.name] = append(rates[p.name], r.rate)
				cpu[p.name] = append(cpu[p.name], r.cpuPerPod)
			}
		}
		others := cpuUse(b).othersSince(usedBefore)
		def, defCPU := median(rates["default"]), median(cpu["default"])
		for _, p := range profiles {
			m, mc := median(rates[p.name]), median(cpu[p.name])
			b.ReportMetric(m, p.name+"-pods/s")
			b.ReportMetric(mc*1000, p.name+"-cpu-ms/pod")
			if p.name != "default" {
				b.ReportMetric(m/def, p.name+"/default")
			}
			fmt.Printf("%d nodes, %s profile: median %.0f pods/s of %v, %.2f of the default profile's; CPU per pod median %.2f ms of %v, %.2f of the default's\n",
				nodes, p.name, m, rounded(rates[p.name]), m/def, mc*1000, roundedMillis(cpu[p.name]), mc/defCPU)
		}
		b.ReportMetric(loadBefore, "load1-before")
		b.ReportMetric(others, "other-cores")
		cores := float64(goruntime.NumCPU())
		if loadBefore > cores || others > cores/4 {
			fmt.Printf("NOT FOR THE RECORD: load average %.1f before the start (limit %.0f cores), other processes used %.2f cores on average (limit %.2f)\n",
				loadBefore, cores, others, cores/4)
		}
	}
}

// serveStaticUsage runs load-watcher's collector, sampling provider every
// period, and its API on a loopback port, as the load-watcher binary does,
// and returns the API's address once the collector has a first snapshot.
func serveStaticUsage(b *testing.B, ctx context.Context, c *cluster.Cluster, provider *static.Provider, period time.Duration) string {
	b.Helper()
	lw, err := inprocess.New(inprocess.Config{RestConfig: c.RestConfig, Source: provider, Period: period, StaleAfter: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		if err := lw.Run(ctx); err != nil && ctx.Err() == nil {
			b.Errorf("collector stopped: %v", err)
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := client.WaitForSnapshot(wctx, lw); err != nil {
		b.Fatalf("waiting for the first usage snapshot: %v", err)
	}
	handler := server.NewHandler(server.Options{Source: lw.Collector})
	go handler.WarmLoop(ctx)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + lis.Addr().String()
}

// median returns the middle value of v (the mean of the two middle ones
// for an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func rounded(v []float64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(math.Round(x))
	}
	return out
}

// roundedMillis formats seconds as milliseconds to two places.
func roundedMillis(v []float64) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.FormatFloat(x*1000, 'f', 2, 64)
	}
	return out
}

// cpuTime is the CPU time the whole machine and this process had used at
// one moment, in clock ticks.
type cpuTime struct {
	at            time.Time
	machine, self uint64
}

// clockTicks is USER_HZ, the unit of /proc/stat and /proc/self/stat: 100
// on every architecture Linux runs Kubernetes on.
const clockTicks = 100

// cpuUse reads the machine's busy CPU time (/proc/stat: all but idle and
// iowait) and this process's (/proc/self/stat: utime and stime).
func cpuUse(tb testing.TB) cpuTime {
	tb.Helper()
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		tb.Fatalf("reading CPU use: %v", err)
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	var u cpuTime
	u.at = time.Now()
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			tb.Fatalf("reading CPU use from %q: %v", line, err)
		}
		if i != 3 && i != 4 { // idle, iowait
			u.machine += v
		}
	}
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		tb.Fatalf("reading this process's CPU use: %v", err)
	}
	// The scheduler processes this one ran count as its own.
	if u.self, err = statTicks(self, true); err != nil {
		tb.Fatalf("reading this process's CPU use: %v", err)
	}
	return u
}

// othersSince returns how many cores other processes kept busy on average
// since before.
func (u cpuTime) othersSince(before cpuTime) float64 {
	others := float64(u.machine-before.machine) - float64(u.self-before.self)
	return max(others, 0) / clockTicks / u.at.Sub(before.at).Seconds()
}

// loadAverage reads the machine's 1-minute load average.
func loadAverage(tb testing.TB) float64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		tb.Fatalf("reading the load average: %v", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		tb.Fatalf("reading the load average: empty /proc/loadavg")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		tb.Fatalf("reading the load average %q: %v", fields[0], err)
	}
	return v
}

// roundResult is what one round measured of a scheduler.
type roundResult struct {
	// rate is bindings per second from the first binding to the last.
	rate float64
	// cpuPerPod is the scheduler process's CPU time over the same
	// interval, in seconds, per binding.
	cpuPerPod float64
}

// scheduleAll creates benchPods pending pods in a fresh namespace, starts a
// scheduler process with args (and env), logging to logFile, and measures
// it from the first binding to the last. It deletes the pods afterwards.
func scheduleAll(b *testing.B, ctx context.Context, client kubernetes.Interface, args, env []string, logFile, scheduler, ns string) roundResult {
	b.Helper()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	createPods(b, ctx, client, ns, scheduler)

	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// The watch may be closed by the API server under this load; it is
	// reopened from the last resource version seen.
	rv := list.ResourceVersion
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { w.Stop() }()
	log, err := os.Create(logFile)
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), runCommandEnv+"=1"), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting the scheduler: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	defer stop()

	bound := map[string]bool{}
	var first, last time.Time
	var cpuFirst, cpuLast time.Duration
	timeout := time.After(10 * time.Minute)
	for len(bound) < benchPods {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				if w, err = client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv}); err != nil {
					b.Fatalf("reopening the watch after %d bindings: %v", len(bound), err)
				}
				continue
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			rv = pod.ResourceVersion
			if ev.Type == watch.Deleted || pod.Spec.NodeName == "" || bound[pod.Name] {
				continue
			}
			now := time.Now()
			if len(bound) == 0 {
				first, cpuFirst = now, processCPU(b, cmd.Process.Pid)
			}
			bound[pod.Name] = true
			last = now
			if len(bound) == benchPods {
				cpuLast = processCPU(b, cmd.Process.Pid)
			}
		case err := <-exited:
			b.Fatalf("the scheduler exited after %d bindings (%v); its log: %s", len(bound), err, logFile)
		case <-timeout:
			b.Fatalf("only %d of %d pods bound; the scheduler's log: %s", len(bound), benchPods, logFile)
		}
	}
	stop()
	deletePods(b, ctx, client, ns)
	// The first binding opens the interval, so it counts benchPods−1 bindings.
	return roundResult{
		rate:      float64(benchPods-1) / last.Sub(first).Seconds(),
		cpuPerPod: (cpuLast - cpuFirst).Seconds() / float64(benchPods-1),
	}
}

// processCPU reads the CPU time process pid has used so far (user and
// system, /proc/<pid>/stat).
func processCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatalf("reading the scheduler's CPU use: %v", err)
	}
	ticks, err := statTicks(stat, false)
	if err != nil {
		tb.Fatalf("reading the scheduler's CPU use: %v", err)
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// statTicks returns utime + stime of a /proc/<pid>/stat line, in clock
// ticks, and with children, also cutime + cstime: the CPU time of the
// process's children that have been waited for.
func statTicks(stat []byte, children bool) (uint64, error) {
	// The command name may hold spaces; the fields after it are fixed.
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) < 15 {
		return 0, fmt.Errorf("short stat line %q", stat)
	}
	fields := rest[11:13] // utime, stime (fields 14 and 15 of proc(5))
	if children {
		fields = rest[11:15] // and cutime, cstime
	}
	var total uint64
	for _, f := range fields {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}

func createPods(b *testing.B, ctx context.Context, client kubernetes.Interface, ns, scheduler string) {
	b.Helper()
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < benchPods; i += workers {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: ns, Labels: map[string]string{"app": "bench"}},
					Spec: corev1.PodSpec{
						SchedulerName: scheduler,
						Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						}}},
					},
				}
				if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("creating pods: %v", err)
	}
}

func deletePods(b *testing.B, ctx context.Context, client kubernetes.Interface, ns string) {
	b.Helper()
	const workers = 32
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < benchPods; i += workers {
				// Errors are retried by the wait below.
				_ = client.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("pod-%04d", i), metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			}
		}(w)
	}
	wg.Wait()
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, err
	})
	if err != nil {
		b.Fatalf("waiting for pods of %s to go: %v", ns, err)
	}
}
