package scenario

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Runs start at the times of their schedule on the scenario's calendar,
// only the latest of those a span missed; a Job once, at its start.
func TestLastRunInAndRunningAt(t *testing.T) {
	m := func(n int) time.Duration { return time.Duration(n) * time.Minute }
	backup := Workload{Name: "backup", Kind: CronJob, Schedule: "*/10 * * * *", RunFor: metav1.Duration{Duration: m(3)}}
	hourly := Workload{Name: "report", Kind: CronJob, Schedule: "@hourly", RunFor: metav1.Duration{Duration: m(5)}}
	scan := Workload{Name: "scan", Kind: Job, Start: metav1.Duration{Duration: m(12)}, RunFor: metav1.Duration{Duration: m(4)}}
	atStart := Workload{Name: "migrate", Kind: Job, RunFor: metav1.Duration{Duration: m(1)}}
	for _, tc := range []struct {
		name     string
		w        Workload
		from, to time.Duration
		want     time.Duration
		ok       bool
	}{
		{"the start is no run of a schedule", backup, -1, 0, 0, false},
		{"the first run", backup, m(9), m(10), m(10), true},
		{"a step that holds none", backup, m(10), m(10) + 15*time.Second, 0, false},
		{"the latest of those missed", backup, m(5), m(41), m(40), true},
		{"hourly", hourly, 0, m(59), 0, false},
		{"hourly, on the hour", hourly, m(59), m(60), m(60), true},
		{"a Job at its start", scan, m(11), m(12), m(12), true},
		{"a Job once", scan, m(12), m(20), 0, false},
		{"a Job at the scenario's start", atStart, -1, 0, 0, true},
		{"a Deployment runs none", Workload{Name: "web", Kind: Deployment}, -1, m(60), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.w.LastRunIn(tc.from, tc.to)
			if got != tc.want || ok != tc.ok {
				t.Errorf("LastRunIn(%s, %s) = %s, %t; want %s, %t", tc.from, tc.to, got, ok, tc.want, tc.ok)
			}
		})
	}
	for _, tc := range []struct {
		w    Workload
		at   time.Duration
		want bool
	}{
		{backup, m(9), false}, {backup, m(10), true}, {backup, m(12) + 59*time.Second, true}, {backup, m(13), false},
		{scan, m(11), false}, {scan, m(15), true}, {scan, m(16), false}, {atStart, 0, true}, {atStart, m(1), false},
	} {
		if got := tc.w.RunningAt(tc.at); got != tc.want {
			t.Errorf("%s RunningAt(%s) = %t, want %t", tc.w.Name, tc.at, got, tc.want)
		}
	}
}
