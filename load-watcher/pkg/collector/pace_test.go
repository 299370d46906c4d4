package collector

import (
	"math/rand/v2"
	"testing"
	"time"
)

// publisher is a source that publishes new samples every interval from
// phase on, each publication up to jitter late.
type publisher struct {
	phase, interval, jitter time.Duration
	shiftAt, shiftBy        time.Duration // from shiftAt on, publications come shiftBy later
	rng                     *rand.Rand
	times                   []time.Duration
}

// publications returns the publication times up to until.
func (s *publisher) publications(until time.Duration) []time.Duration {
	for len(s.times) == 0 || s.times[len(s.times)-1] <= until {
		at := s.phase + time.Duration(len(s.times))*s.interval
		if s.shiftAt > 0 && at >= s.shiftAt {
			at += s.shiftBy
		}
		if s.jitter > 0 {
			at += time.Duration(s.rng.Int64N(int64(s.jitter)))
		}
		s.times = append(s.times, at)
	}
	return s.times
}

// paced is what a run of the pacer against a publisher did after warm-up.
type paced struct {
	rounds, published int
	maxLag            time.Duration // from a publication to the first round that read it
	waits             []time.Duration
}

// pace drives a pacer with the given period against src for the given time,
// rounds taking no time, and reports what happened after warm.
func pace(period time.Duration, src *publisher, total, warm time.Duration) paced {
	p := newPacer(period)
	var out paced
	var last time.Duration = -1
	for now := time.Duration(0); now < total; {
		// Which publications fall in (last, now]?
		var newest time.Duration = -1
		read := 0
		for _, at := range src.publications(now) {
			if at > last && at <= now {
				newest, read = max(newest, at), read+1
			}
		}
		// Every publication read in this round waited at least now-newest;
		// the oldest of them waited longest.
		if now >= warm {
			out.rounds++
			out.published += read
			for _, at := range src.publications(now) {
				if at > last && at <= now {
					out.maxLag = max(out.maxLag, now-at)
				}
			}
		}
		wait := p.next(time.Unix(0, 0).Add(now), read > 0, false)
		if wait <= 0 {
			panic("pacer returned no wait")
		}
		if now >= warm {
			out.waits = append(out.waits, wait)
		}
		last = now
		now += wait
	}
	return out
}

func TestPacerReadsEachPublicationSoonAfterIt(t *testing.T) {
	const period = 15 * time.Second
	retry := period / pacerRetryDivisor
	rng := rand.New(rand.NewPCG(7, 15))
	var worstLag time.Duration
	var worstRatio float64
	for i := 0; i < 60; i++ {
		phase := time.Duration(rng.Int64N(int64(period)))
		// Mostly metrics-server's resolution equal to the period; some
		// with a clock a little off either way.
		interval := period
		switch i % 3 {
		case 1:
			interval = period - 200*time.Millisecond
		case 2:
			interval = period + 300*time.Millisecond
		}
		src := &publisher{phase: phase, interval: interval, jitter: 300 * time.Millisecond, rng: rng}
		got := pace(period, src, 2*time.Hour, 3*time.Minute)
		ratio := float64(got.rounds) / float64(got.published)
		worstLag, worstRatio = max(worstLag, got.maxLag), max(worstRatio, ratio)
		// A fixed ticker would read each publication up to a whole period
		// late; the pacer at most a retry (plus the publication's jitter).
		if got.maxLag > retry+300*time.Millisecond {
			t.Errorf("every %s from %s: a publication waited %s to be read, want at most %s", interval, phase, got.maxLag, retry+300*time.Millisecond)
		}
		// The cost: a few more requests than publications, far fewer than
		// sampling at a shorter period (10 s would be 1.5×).
		if ratio > 1.2 {
			t.Errorf("every %s from %s: %d rounds for %d publications (%.2f×), want at most 1.2×", interval, phase, got.rounds, got.published, ratio)
		}
	}
	t.Logf("longest wait for a publication %s, at most %.2f rounds per publication", worstLag, worstRatio)
}

func TestPacerFindsAMovedPhase(t *testing.T) {
	const period = 15 * time.Second
	retry := period / pacerRetryDivisor
	for _, shift := range []time.Duration{-7 * time.Second, -2 * time.Second, 4 * time.Second, 11 * time.Second} {
		// metrics-server restarts: its scrapes come at another moment.
		src := &publisher{phase: 5 * time.Second, interval: period, shiftAt: time.Hour, shiftBy: shift}
		got := pace(period, src, time.Hour+2*time.Hour, time.Hour+5*time.Minute)
		if got.maxLag > retry {
			t.Errorf("phase moved by %s: a publication waited %s five minutes later, want at most %s", shift, got.maxLag, retry)
		}
	}
}

func TestPacerKeepsThePeriodForASourceAlwaysNew(t *testing.T) {
	const period = 15 * time.Second
	// A source with something new at every moment (Prometheus evaluates
	// when asked): publications much more often than rounds.
	src := &publisher{interval: 100 * time.Millisecond}
	got := pace(period, src, time.Hour, 2*time.Minute)
	for i, w := range got.waits {
		if w != period {
			t.Fatalf("round %d after two minutes waited %s, want the plain period %s", i, w, period)
		}
	}
}

func TestPacerFollowsASlowerSourceWithoutPolling(t *testing.T) {
	const period = 15 * time.Second
	for _, interval := range []time.Duration{30 * time.Second, 60 * time.Second} {
		src := &publisher{phase: 4 * time.Second, interval: interval}
		got := pace(period, src, 2*time.Hour, 5*time.Minute)
		if got.maxLag > period {
			t.Errorf("source every %s: a publication waited %s, want at most a period", interval, got.maxLag)
		}
		// At most a round and a retry per period: never a tight loop.
		perPeriod := float64(got.rounds) / (float64(2*time.Hour-5*time.Minute) / float64(period))
		if perPeriod > 1.6 {
			t.Errorf("source every %s: %.2f rounds per period, want at most 1.6", interval, perPeriod)
		}
	}
}

func TestPacerWaitsAPeriodAfterAFailure(t *testing.T) {
	p := newPacer(15 * time.Second)
	now := time.Unix(0, 0)
	p.next(now, true, false)
	p.next(now, false, false) // empty: a retry would follow
	if got := p.next(now, false, true); got != 15*time.Second {
		t.Errorf("after a failed round: wait %s, want the period", got)
	}
}
