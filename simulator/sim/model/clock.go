package model

import (
	"sync"
	"time"
)

// Clock is the simulated time: it starts at a real instant and moves only
// when the engine advances it. It implements clock.PassiveClock.
type Clock struct {
	mu  sync.RWMutex
	now time.Time
}

// NewClock starts a simulated clock at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now
}

// Since returns the simulated time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
