package sim

import (
	"sync"
	"time"
)

// simClock is the simulated time: it starts at a real instant and moves only
// when the engine advances it. It implements clock.PassiveClock.
type simClock struct {
	mu  sync.RWMutex
	now time.Time
}

func newSimClock(start time.Time) *simClock { return &simClock{now: start} }

// Now returns the simulated time.
func (c *simClock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now
}

// Since returns the simulated time elapsed since t.
func (c *simClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// set moves the clock to t.
func (c *simClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
