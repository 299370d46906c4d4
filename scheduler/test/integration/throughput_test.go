package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
	"github.com/ballast-sched/ballast/simulator/cluster"
)

const (
	benchNodes = 500
	benchPods  = 5000
	// benchRounds alternates the profiles this many times each, so neither
	// always runs on a colder or warmer process, and so the best round of
	// each shows what interference from other processes leaves.
	benchRounds = 3
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

// BenchmarkSchedulingThroughput compares the scheduling throughput of the
// ballast-scheduler profile (as shipped) with kube-scheduler's default
// profile, in the same process on the same 500-node in-process cluster.
// Each round creates 5 000 pods while no scheduler runs, starts the
// scheduler and times from the first binding to the last. Run with
// -benchtime=1x: one iteration is one full comparison.
func BenchmarkSchedulingThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a control plane; skipped with -short")
	}
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

	// Each scheduler run gets its own plugins (and so its own usage source
	// and tracker), as a scheduler process would.
	profiles := []struct {
		name    string
		config  string
		plugins func() []schedapp.Option
	}{
		{name: "default", config: throughputConfig("- schedulerName: default-scheduler\n"), plugins: func() []schedapp.Option { return nil }},
		{name: "ballast", config: throughputConfig(ballastProfile), plugins: func() []schedapp.Option { return app.Plugins(source) }},
	}
	for i := 0; i < b.N; i++ {
		rates := map[string][]float64{}
		for round := 0; round < benchRounds; round++ {
			for _, p := range profiles {
				scheduler := "default-scheduler"
				if p.name == "ballast" {
					scheduler = "ballast-scheduler"
				}
				rate := scheduleAll(b, ctx, c, client, p.config, p.plugins(), scheduler, fmt.Sprintf("%s-%d-%d", p.name, i, round))
				b.Logf("round %d, %s profile: %.0f pods/s", round, p.name, rate)
				rates[p.name] = append(rates[p.name], rate)
			}
		}
		def, bal := mean(rates["default"]), mean(rates["ballast"])
		b.ReportMetric(def, "default-pods/s")
		b.ReportMetric(bal, "ballast-pods/s")
		b.ReportMetric(bal/def, "ratio")
		bestDef, bestBal := best(rates["default"]), best(rates["ballast"])
		b.ReportMetric(bestDef, "best-default-pods/s")
		b.ReportMetric(bestBal, "best-ballast-pods/s")
		b.ReportMetric(bestBal/bestDef, "best-ratio")
	}
}

func best(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// scheduleAll creates benchPods pending pods in a fresh namespace, starts a
// scheduler with config, and returns bindings per second from the first
// binding to the last. It deletes the pods afterwards.
func scheduleAll(b *testing.B, ctx context.Context, c *cluster.Cluster, client kubernetes.Interface,
	config string, plugins []schedapp.Option, scheduler, ns string) float64 {
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
	s, err := c.StartScheduler(ctx, config, plugins...)
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
