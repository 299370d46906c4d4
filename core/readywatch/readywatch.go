// Package readywatch follows how many pods of a workload are Ready through
// a change such as a move or a rollout, from every change the API server
// reports rather than from samples, so that a moment without a Ready pod
// cannot slip between two looks.
package readywatch

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Watch follows the pods of namespace matching selector.
type Watch struct {
	w      watch.Interface
	done   chan struct{}
	mu     sync.Mutex
	ready  map[string]bool
	fewest int
	events int
}

// Start lists the pods and watches them from that list on. Stop ends it.
func Start(ctx context.Context, c kubernetes.Interface, namespace, selector string) (*Watch, error) {
	list, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing pods %s in %s: %w", selector, namespace, err)
	}
	w, err := c.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watching pods %s in %s: %w", selector, namespace, err)
	}
	rw := &Watch{w: w, done: make(chan struct{}), ready: map[string]bool{}, fewest: -1}
	for i := range list.Items {
		rw.note(watch.Added, &list.Items[i])
	}
	go func() {
		defer close(rw.done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*v1.Pod); ok {
				rw.note(ev.Type, pod)
			}
		}
	}()
	return rw, nil
}

func (rw *Watch) note(t watch.EventType, pod *v1.Pod) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.ready[pod.Name] = t != watch.Deleted && pod.DeletionTimestamp == nil && IsReady(pod)
	n := 0
	for _, r := range rw.ready {
		if r {
			n++
		}
	}
	if rw.fewest < 0 || n < rw.fewest {
		rw.fewest = n
	}
	rw.events++
}

// Fewest returns the fewest Ready pods (not being deleted) there were after
// any change since Start, and how many changes it saw. A pod being deleted
// no longer counts: it is leaving, whatever its probes say.
func (rw *Watch) Fewest() (fewest, changes int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.fewest, rw.events
}

// Stop ends the watch. The watch also ends when its server closes it (a
// watch lasts minutes): Fewest then covers until that moment only, and
// Closed says so.
func (rw *Watch) Stop() {
	rw.w.Stop()
	<-rw.done
}

// Closed reports whether the watch has ended.
func (rw *Watch) Closed() bool {
	select {
	case <-rw.done:
		return true
	default:
		return false
	}
}

// IsReady reports whether pod's Ready condition is true.
func IsReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
