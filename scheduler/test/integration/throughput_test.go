package integration

import (
	"context"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/ballast-sched/ballast/core/cluster"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
)

const (
	benchNodes = 500
	benchPods  = 5000
	// benchRounds is how many times each profile runs by default
	// (BALLAST_BENCH_ROUNDS overrides it). Profiles take turns within a
	// round, and the first of each round rotates, so no profile always runs
	// on a colder or warmer process; the ratio of medians then cancels most
	// of what other processes on the machine do to single rounds.
	benchRounds = 5
)

// throughputConfig is one scheduler profile with a client fast enough that
// API rate limits do not cap the measurement.
func throughputConfig(profile string) string {
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
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

// throughputProfile is one scheduler configuration the benchmark times.
type throughputProfile struct {
	name      string
	scheduler string
	config    string
	// plugins builds fresh out-of-tree plugins per run, as a new scheduler
	// process would have.
	plugins func() []schedapp.Option
}

// BenchmarkSchedulingThroughput compares the scheduling throughput of the
// ballast-scheduler profile (as shipped) with kube-scheduler's default
// profile, in the same process on the same 500-node in-process cluster. A
// third profile, the default one plus a score plugin that does nothing and
// does not sign pods, shows what losing opportunistic batching alone costs.
// Each round creates 5 000 pods while no scheduler runs, starts the
// scheduler and times from the first binding to the last. Run with
// -benchtime=1x: one iteration is one full comparison of
// BALLAST_BENCH_ROUNDS rounds (default 5).
func BenchmarkSchedulingThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a control plane; skipped with -short")
	}
	rounds := benchRounds
	if v := os.Getenv("BALLAST_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BALLAST_BENCH_ROUNDS=%q: want a whole number of at least 1", v)
		}
		rounds = n
	}
	// The load average before anything starts is the machine's own; once
	// the benchmark runs it keeps two cores busy itself.
	loadBefore := loadAverage(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cluster.Start(b, cluster.Options{ControllerWorkers: 1})
	if err != nil {
		b.Fatal(err)
	}
	usage := static.New()
	for i := 0; i < benchNodes; i++ {
		name := fmt.Sprintf("node-%03d", i)
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: name, CPU: "8", Memory: "16Gi"}); err != nil {
			b.Fatal(err)
		}
		mem := 20 + float64(i*53%50)
		if i%20 == 0 {
			mem = 95 // a few nodes above the memory threshold, so the filter works too
		}
		usage.Set(name, 10+float64(i*37%50), mem)
	}
	fast := rest.CopyConfig(c.RestConfig)
	fast.QPS, fast.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(fast)
	if err != nil {
		b.Fatal(err)
	}
	ballast, err := os.ReadFile("../../config/ballast-scheduler.yaml")
	if err != nil {
		b.Fatal(err)
	}
	ballastProfile := string(ballast[strings.Index(string(ballast), "- schedulerName:"):])
	source := staticUsage(b, c, usage, 5*time.Second)

	profiles := []throughputProfile{
		{name: "default", scheduler: "default-scheduler", config: throughputConfig("- schedulerName: default-scheduler\n"),
			plugins: func() []schedapp.Option { return nil }},
		{name: "default+unsigned", scheduler: "default-scheduler",
			config: throughputConfig("- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n      - name: NoOpScore\n"),
			plugins: func() []schedapp.Option {
				return []schedapp.Option{schedapp.WithPlugin("NoOpScore", func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
					return noOpScore{}, nil
				})}
			}},
		{name: "ballast", scheduler: "ballast-scheduler", config: throughputConfig(ballastProfile),
			plugins: func() []schedapp.Option { return app.Plugins(source) }},
	}
	for i := 0; i < b.N; i++ {
		usedBefore := cpuUse(b)
		rates := map[string][]float64{}
		for round := 0; round < rounds; round++ {
			for k := range profiles {
				p := profiles[(round+k)%len(profiles)]
				ns := fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(p.name, "+", "-"), i, round)
				rate := scheduleAll(b, ctx, c, client, p.name, p.config, p.plugins(), p.scheduler, ns)
				// Printed rather than logged: the cluster's own log lines would
				// push a benchmark's log past what go test shows.
				fmt.Printf("round %d, %s profile: %.0f pods/s\n", round, p.name, rate)
				rates[p.name] = append(rates[p.name], rate)
			}
		}
		others := cpuUse(b).othersSince(usedBefore)
		def := median(rates["default"])
		for _, p := range profiles {
			m := median(rates[p.name])
			b.ReportMetric(m, p.name+"-pods/s")
			if p.name != "default" {
				b.ReportMetric(m/def, p.name+"/default")
			}
			fmt.Printf("%s profile: median %.0f pods/s of %v, %.2f of the default profile's\n", p.name, m, rounded(rates[p.name]), m/def)
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
	// The command name may hold spaces; the fields after it are fixed.
	rest := strings.Fields(string(self[strings.LastIndexByte(string(self), ')')+1:]))
	for _, f := range rest[11:13] { // utime, stime (fields 14 and 15 of proc(5))
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			tb.Fatalf("reading this process's CPU use: %v", err)
		}
		u.self += v
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

// scheduleAll creates benchPods pending pods in a fresh namespace, starts a
// scheduler with config, and returns bindings per second from the first
// binding to the last. It deletes the pods afterwards.
func scheduleAll(b *testing.B, ctx context.Context, c *cluster.Cluster, client kubernetes.Interface,
	profile, config string, plugins []schedapp.Option, scheduler, ns string) float64 {
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
	// The scheduler's goroutines carry the profile's name as a pprof label,
	// so a -cpuprofile of the benchmark splits by profile (-tagfocus).
	var s *cluster.Scheduler
	pprof.Do(ctx, pprof.Labels("profile", profile), func(ctx context.Context) {
		s, err = c.StartScheduler(ctx, config, plugins...)
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()

	bound := map[string]bool{}
	var first, last time.Time
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
				first = now
			}
			bound[pod.Name] = true
			last = now
		case <-timeout:
			b.Fatalf("only %d of %d pods bound", len(bound), benchPods)
		}
	}
	s.Stop()
	deletePods(b, ctx, client, ns)
	// The first binding opens the interval, so it counts benchPods−1 bindings.
	return float64(benchPods-1) / last.Sub(first).Seconds()
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
