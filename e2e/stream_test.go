//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/e2e/pkg/lane"
)

const (
	// defaultScheduler is the lane's own kube-scheduler, the reference every
	// Ballast pod of the stream is compared with.
	defaultScheduler = "default-scheduler"
	// streamNode runs the stream's pods; streamTaint keeps other pods off.
	streamNode  = "stream-stand-in"
	streamTaint = "ballast.dev/stream"
	// streamLabel marks the stream's pods.
	streamLabel = "stream"
)

// streamPod is one pod of the stream: when it existed and when a scheduler
// bound it, as the test saw both.
type streamPod struct {
	name, scheduler string
	pair            int
	created, bound  time.Time
	// refused counts this pod's create calls the API server refused
	// before one went through.
	refused int
}

// twinSkew is how far apart the create calls of a pair's twins may return
// for the twins to count as created at the same moment. They are sent at
// once; a pair further apart, or one whose creates were refused, straddles
// a fault's edge (one twin created before the API server stopped, the other
// after it was back): comparing their waits would compare the fault with
// no fault.
const twinSkew = time.Second

// stream creates a pair of pods every interval, one for Ballast's scheduler
// and one for the default scheduler, so that each Ballast pod has a twin
// created at the same moment under the same load: what the API server, the
// node and the machine do to one, they do to the other. A pod whose create
// call fails (the API server is down) is created again until it exists; it
// was pending only from then on. Bound pods are deleted after a while so the
// node never fills up.
type stream struct {
	client    kubernetes.Interface
	namespace string
	interval  time.Duration

	mu   sync.Mutex
	pods map[string]*streamPod
	// refused counts create calls that failed and were retried.
	refused int

	stop context.CancelFunc
	done sync.WaitGroup
}

func startStream(ctx context.Context, c kubernetes.Interface, namespace string, interval time.Duration) (*stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &stream{client: c, namespace: namespace, interval: interval, pods: map[string]*streamPod{}, stop: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(namespace))
	pods := factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.observe,
		UpdateFunc: func(_, obj any) { s.observe(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		cancel()
		return nil, fmt.Errorf("pod informer of %s did not sync", namespace)
	}
	s.done.Add(2)
	go func() { defer s.done.Done(); s.create(ctx) }()
	go func() { defer s.done.Done(); s.reap(ctx) }()
	return s, nil
}

// Stop ends the creations and waits for the stream's goroutines.
func (s *stream) Stop() {
	s.stop()
	s.done.Wait()
}

func (s *stream) observe(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.NodeName == "" || p.Labels[streamLabel] != "true" {
		return
	}
	bound := time.Now()
	// The watch may see a pod long after it was bound: after the API
	// server's restart the test's own informer backs off like any other,
	// and would see both twins bound at once. The API server stamps the
	// binding on the PodScheduled condition, in whole seconds: the binding
	// was before the stamp's next second.
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			bound = minTime(bound, c.LastTransitionTime.Add(time.Second))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.entry(p.Name, p.Spec.SchedulerName, p.Labels["pair"])
	if sp.bound.IsZero() {
		sp.bound = bound
		if sp.bound.Before(sp.created) {
			sp.bound = sp.created
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// entry is the record of a pod, made by whoever sees the pod first: the
// informer may report it bound before its create call returns. s.mu is held.
func (s *stream) entry(name, scheduler, pair string) *streamPod {
	sp := s.pods[name]
	if sp == nil {
		n, _ := strconv.Atoi(pair)
		sp = &streamPod{name: name, scheduler: scheduler, pair: n}
		s.pods[name] = sp
	}
	return sp
}

func (s *stream) create(ctx context.Context) {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for pair := 0; ; pair++ {
		var wg sync.WaitGroup
		for _, sched := range []string{ballastScheduler, defaultScheduler} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.createPod(ctx, pair, sched)
			}()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// createPod creates one pod, again and again while the API server refuses.
func (s *stream) createPod(ctx context.Context, pair int, scheduler string) {
	name := fmt.Sprintf("p%04d-%s", pair, map[string]string{ballastScheduler: "ballast", defaultScheduler: "default"}[scheduler])
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace, Labels: map[string]string{streamLabel: "true", "pair": strconv.Itoa(pair)}},
		Spec: corev1.PodSpec{
			SchedulerName:                 scheduler,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			NodeSelector:                  map[string]string{corev1.LabelHostname: streamNode},
			Tolerations:                   []corev1.Toleration{{Key: streamTaint, Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "app", Image: lane.SandboxImage, ImagePullPolicy: corev1.PullNever,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceMemory: resource.MustParse("8Mi"), corev1.ResourceCPU: resource.MustParse("5m"),
				}},
				SecurityContext: restricted(),
			}},
		},
	}
	for ctx.Err() == nil {
		_, err := s.client.CoreV1().Pods(s.namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			s.mu.Lock()
			sp := s.entry(name, scheduler, strconv.Itoa(pair))
			sp.created = time.Now()
			if !sp.bound.IsZero() && sp.bound.Before(sp.created) {
				sp.bound = sp.created
			}
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		s.refused++
		s.entry(name, scheduler, strconv.Itoa(pair)).refused++
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// reap deletes pods bound more than 5 s ago, as they would end on a
// cluster: the schedulers' caches and the API server see a steady
// population, not an ever-growing one.
func (s *stream) reap(ctx context.Context) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	deleted := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var old []string
		s.mu.Lock()
		for name, p := range s.pods {
			if !deleted[name] && !p.bound.IsZero() && time.Since(p.bound) > 5*time.Second {
				old = append(old, name)
			}
		}
		s.mu.Unlock()
		for _, name := range old {
			err := s.client.CoreV1().Pods(s.namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err == nil {
				deleted[name] = true
			}
		}
	}
}

// pairs returns the pairs whose Ballast pod was created in [from, to):
// those whose twins were created at the same moment, to be compared, and
// those that straddle a fault's edge (see twinSkew), to be reported only.
func (s *stream) pairs(from, to time.Time) (same, straddling []pair) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byPair := map[int]*pair{}
	for _, p := range s.pods {
		pr := byPair[p.pair]
		if pr == nil {
			pr = &pair{}
			byPair[p.pair] = pr
		}
		cp := *p
		if p.scheduler == ballastScheduler {
			pr.ballast = &cp
		} else {
			pr.reference = &cp
		}
	}
	for _, pr := range byPair {
		if pr.ballast == nil || pr.reference == nil || pr.ballast.created.IsZero() || pr.reference.created.IsZero() ||
			pr.ballast.created.Before(from) || !pr.ballast.created.Before(to) {
			continue
		}
		if pr.straddles() {
			straddling = append(straddling, *pr)
		} else {
			same = append(same, *pr)
		}
	}
	byNumber := func(a, b pair) int { return a.ballast.pair - b.ballast.pair }
	slices.SortFunc(same, byNumber)
	slices.SortFunc(straddling, byNumber)
	return same, straddling
}

// unbound lists the pods created before cutoff that no scheduler bound.
func (s *stream) unbound(cutoff time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.pods {
		if p.bound.IsZero() && !p.created.IsZero() && p.created.Before(cutoff) {
			out = append(out, p.name)
		}
	}
	sort.Strings(out)
	return out
}

// pair is a Ballast pod and its twin for the default scheduler.
type pair struct {
	ballast, reference *streamPod
}

// straddles tells a pair whose twins were not created at the same moment:
// a create of either was refused, or they returned more than twinSkew
// apart.
func (p pair) straddles() bool {
	skew := p.ballast.created.Sub(p.reference.created)
	return p.ballast.refused > 0 || p.reference.refused > 0 || skew > twinSkew || skew < -twinSkew
}

// extraWait is how much longer the Ballast pod waited to be bound than its
// twin; a pod not bound yet counts as waiting until now.
func (p pair) extraWait(now time.Time) time.Duration {
	wait := func(sp *streamPod) time.Duration {
		if sp.bound.IsZero() {
			return now.Sub(sp.created)
		}
		return sp.bound.Sub(sp.created)
	}
	return wait(p.ballast) - wait(p.reference)
}

// refusedCreates counts the create calls that failed and were retried.
func (s *stream) refusedCreates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// TestStreamPairsStraddling checks which pairs the fault table compares:
// twins created together are, a pair with a refused create or whose twins
// returned apart straddles a fault's edge and is reported instead, and a
// pair of another window is neither.
func TestStreamPairsStraddling(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	s := &stream{pods: map[string]*streamPod{}}
	add := func(pair int, ballastAt, defaultAt time.Duration, ballastRefused, defaultRefused int) {
		for _, sp := range []*streamPod{
			{name: fmt.Sprintf("p%d-ballast", pair), scheduler: ballastScheduler, pair: pair, created: t0.Add(ballastAt), refused: ballastRefused},
			{name: fmt.Sprintf("p%d-default", pair), scheduler: defaultScheduler, pair: pair, created: t0.Add(defaultAt), refused: defaultRefused},
		} {
			s.pods[sp.name] = sp
		}
	}
	add(1, 0, 20*time.Millisecond, 0, 0)                            // together
	add(2, time.Second, 73*time.Second, 0, 3)                       // the default twin created once the API server was back
	add(3, 2*time.Second, 2*time.Second, 1, 0)                      // a refused create, both returned at once
	add(4, 3*time.Second, 3*time.Second+900*time.Millisecond, 0, 0) // within twinSkew
	add(5, 80*time.Second, 5*time.Second, 0, 0)                     // the Ballast twin late
	add(6, 200*time.Second, 200*time.Second, 0, 0)                  // another fault's window
	same, straddling := s.pairs(t0, t0.Add(100*time.Second))
	numbers := func(ps []pair) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.ballast.pair)
		}
		return out
	}
	if got, want := numbers(same), []int{1, 4}; !slices.Equal(got, want) {
		t.Errorf("compared pairs %v, want %v", got, want)
	}
	if got, want := numbers(straddling), []int{2, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("straddling pairs %v, want %v", got, want)
	}
}
