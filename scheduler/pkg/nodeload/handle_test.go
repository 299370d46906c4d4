package nodeload

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// fakeHandle is a framework handle that only has an event recorder.
type fakeHandle struct {
	fwk.Handle
	rec *events.FakeRecorder
}

func (h fakeHandle) EventRecorder() events.EventRecorderLogger { return h.rec }

// activator is a framework handle that records the pods it is asked to
// move to the active queue.
type activator struct {
	fwk.Handle
	mu        sync.Mutex
	activated []string
}

func (a *activator) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range pods {
		a.activated = append(a.activated, p.Name)
	}
	slices.Sort(a.activated)
}

func (a *activator) pods() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.activated)
}
