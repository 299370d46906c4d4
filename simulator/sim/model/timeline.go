package model

import (
	"sort"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// Timeline hands out a scenario's events in time order.
type Timeline struct {
	events []scenario.Event
	next   int
}

// NewTimeline orders sc's events by time, keeping the file's order between
// events at the same time.
func NewTimeline(sc *scenario.Scenario) *Timeline {
	events := append([]scenario.Event(nil), sc.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At.Duration < events[j].At.Duration })
	return &Timeline{events: events}
}

// Due returns the events due at scenario time t that were not handed out
// yet, and marks them handed out.
func (tl *Timeline) Due(t time.Duration) []scenario.Event {
	start := tl.next
	for tl.next < len(tl.events) && tl.events[tl.next].At.Duration <= t {
		tl.next++
	}
	return tl.events[start:tl.next]
}
