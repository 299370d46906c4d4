package nodeload

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// eventMemory is how long a (pod, cause) pair is remembered, so that a pod
// retried for hours gets a reminder now and then rather than a flood.
const eventMemory = time.Hour

// maxRemembered bounds how many pods the memory of sent events holds.
const maxRemembered = 10000

// eventOnce decides whether an event for a pod and cause is the first one.
type eventOnce struct {
	mu   sync.Mutex
	sent map[types.UID]map[Cause]time.Time
	now  func() time.Time
}

func newEventOnce(now func() time.Time) *eventOnce {
	return &eventOnce{sent: map[types.UID]map[Cause]time.Time{}, now: now}
}

// first reports whether no event was sent yet for this pod and cause, and
// records that one is now.
func (e *eventOnce) first(uid types.UID, cause Cause) bool {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if at, ok := e.sent[uid][cause]; ok && now.Sub(at) < eventMemory {
		return false
	}
	if _, known := e.sent[uid]; !known && len(e.sent) >= maxRemembered {
		e.pruneLocked(now)
	}
	if e.sent[uid] == nil {
		e.sent[uid] = map[Cause]time.Time{}
	}
	e.sent[uid][cause] = now
	return true
}

// pruneLocked forgets old entries, or everything if all are recent: a
// repeated event is better than unbounded memory.
func (e *eventOnce) pruneLocked(now time.Time) {
	for uid, causes := range e.sent {
		for c, at := range causes {
			if now.Sub(at) >= eventMemory {
				delete(causes, c)
			}
		}
		if len(causes) == 0 {
			delete(e.sent, uid)
		}
	}
	if len(e.sent) >= maxRemembered {
		e.sent = map[types.UID]map[Cause]time.Time{}
	}
}

// forget drops what was sent for a pod (it was bound or deleted).
func (e *eventOnce) forget(uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.sent, uid)
}
