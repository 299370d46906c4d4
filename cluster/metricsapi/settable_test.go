package metricsapi

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestSettableServesTheNewestScrape(t *testing.T) {
	epoch := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	now := epoch
	s := NewSettable()
	s.Resolution = 15 * time.Second
	s.epoch, s.now = epoch, func() time.Time { return now }

	memory := func(at time.Duration) (string, time.Time) {
		t.Helper()
		now = epoch.Add(at)
		usage, stamped, _ := s.NodeUsage()
		q, ok := usage["pi"][corev1.ResourceMemory]
		if !ok {
			return "", stamped
		}
		return q.String(), stamped
	}
	now = epoch.Add(time.Second)
	s.Set("pi", "100m", "1Gi") // after the scrape at 0 s
	steps := []struct {
		at      time.Duration
		set     string // set the memory to this after reading
		want    string
		stamped time.Duration
	}{
		{at: 2 * time.Second, want: "", stamped: 0}, // not scraped yet
		{at: 15 * time.Second, want: "1Gi", stamped: 15 * time.Second},
		{at: 16 * time.Second, set: "2Gi", want: "1Gi", stamped: 15 * time.Second},
		{at: 29 * time.Second, want: "1Gi", stamped: 15 * time.Second}, // the change waits for the scrape
		{at: 31 * time.Second, want: "2Gi", stamped: 30 * time.Second},
		{at: 50 * time.Second, set: "3Gi", want: "2Gi", stamped: 45 * time.Second},
		{at: 61 * time.Second, want: "3Gi", stamped: 60 * time.Second},
	}
	for _, st := range steps {
		got, stamped := memory(st.at)
		if got != st.want || !stamped.Equal(epoch.Add(st.stamped)) {
			t.Errorf("at %s: served %q stamped %s, want %q stamped %s", st.at, got, stamped.Sub(epoch), st.want, st.stamped)
		}
		if st.set != "" {
			s.Set("pi", "100m", st.set)
		}
	}

	// Without a resolution every change is served at once, stamped now.
	s = NewSettable()
	s.Set("pi", "100m", "5Gi")
	usage, stamped, _ := s.NodeUsage()
	if q := usage["pi"][corev1.ResourceMemory]; q.String() != "5Gi" || time.Since(stamped) > time.Minute {
		t.Errorf("without a resolution: served %s stamped %s ago, want 5Gi now", q.String(), time.Since(stamped))
	}
}
