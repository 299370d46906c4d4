package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// ScheduleEpoch is the calendar time of a scenario's start, on which
// CronJob schedules are read: midnight, UTC, of a Thursday the first of a
// month, so that a schedule means the same in every run.
var ScheduleEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// ParseSchedule reads a CronJob schedule as Kubernetes does: five fields,
// minute first, or a descriptor (@hourly, @every 10m, …); a time zone in
// it (TZ=, CRON_TZ=) is refused, as Kubernetes refuses it.
func ParseSchedule(spec string) (_ cron.Schedule, err error) {
	if strings.Contains(spec, "TZ") {
		return nil, fmt.Errorf("a time zone (TZ=, CRON_TZ=) is not taken: the scenario's calendar is UTC")
	}
	// The parser is not ours: a schedule it chokes on is refused, not a
	// crash.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable schedule %q: %v", spec, r)
		}
	}()
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("unreadable schedule %q: %w", spec, err)
	}
	return s, nil
}

// LastRunIn is the latest time a Job or CronJob w starts a run after from
// and at most at to, scenario times: a Job's Start (a Start of zero counts
// as after a from below zero), or the last time of a CronJob's schedule
// (its earlier times in the span are missed, as the CronJob controller
// starts only the latest of the runs it missed). False when it starts none
// there, or w is of another kind.
func (w Workload) LastRunIn(from, to time.Duration) (time.Duration, bool) {
	switch w.Kind {
	case Job:
		if from < w.Start.Duration && w.Start.Duration <= to {
			return w.Start.Duration, true
		}
	case CronJob:
		sched, err := ParseSchedule(w.Schedule)
		if err != nil || to <= max(from, 0) {
			return 0, false
		}
		var last time.Duration
		found := false
		for t := sched.Next(ScheduleEpoch.Add(max(from, 0))); !t.IsZero() && t.Sub(ScheduleEpoch) <= to; t = sched.Next(t) {
			last, found = t.Sub(ScheduleEpoch), true
		}
		return last, found
	}
	return 0, false
}

// RunningAt reports whether a run of Job or CronJob w would be running at
// scenario time t had each started as it was due and never waited for a
// node: it started after t − RunFor and at or before t.
func (w Workload) RunningAt(t time.Duration) bool {
	_, ok := w.LastRunIn(max(t-w.RunFor.Duration, -1), t)
	return ok
}
