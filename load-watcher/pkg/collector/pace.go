package collector

import "time"

// pacer decides when the next sampling round runs.
//
// metrics-server publishes new samples once per scrape (its
// --metric-resolution, 15 s by default and on k3s). Sampling it on a fixed
// ticker of the same length reads each scrape at a fixed but arbitrary
// moment after it: anywhere from at once to a whole period late. The pacer
// keeps the rounds just behind the source's publications instead, without a
// faster period:
//
//   - a round that brings new samples is followed by the next one a nudge
//     earlier than a period, so the rounds creep towards the moment the
//     source publishes;
//   - the first round that brings nothing new has passed that moment: it is
//     followed by one retry a short while later, which finds the
//     publication, and the creeping starts again from there;
//   - a retry that also finds nothing (a source slower than the period)
//     goes back to the period's grid.
//
// Until a retry has found a publication, and when rounds have crept further
// than a locked phase ever needs (the source's phase moved), each nudge is as
// long as a retry, so the publication is found within a few rounds; once found,
// the nudge is fine, and each new sample is read at most a retry after it is
// published, for one extra request every retry/fineNudge rounds or so. A
// source that has something new in every round (Prometheus evaluates its
// queries when asked) has no moment to keep up with: once the rounds have
// crept a whole period without an empty one, the pacer keeps the plain
// period until a round comes back empty.
type pacer struct {
	period time.Duration
	fine   time.Duration
	retry  time.Duration

	// locked is true once a retry found what the round before it did not:
	// the source publishes between the two.
	locked bool
	// unanswered is true from a retry that found nothing (a source slower
	// than the period) to the next round that brings something new; no
	// retry follows an empty round meanwhile.
	unanswered bool
	// crept is how far the rounds have crept since the last empty round.
	crept time.Duration
	// retrying is true when the last round was the retry after an empty one.
	retrying bool
	// grid is when the round after an unanswered retry is due.
	grid time.Time
}

// The fine nudge and the retry in fractions of the period: at the default
// 15 s, a locked round creeps 0.25 s earlier than the last and a retry
// follows 3 s after an empty round.
const (
	pacerFineDivisor  = 60
	pacerRetryDivisor = 5
)

func newPacer(period time.Duration) *pacer {
	return &pacer{period: period, fine: period / pacerFineDivisor, retry: period / pacerRetryDivisor}
}

// next returns how long to wait after a round that ended at now, given
// whether it brought a newer sample for any node and whether it failed. A
// failed round waits a whole period: a failing source is not asked again
// sooner.
func (p *pacer) next(now time.Time, fresh, failed bool) time.Duration {
	wasRetry := p.retrying
	p.retrying = false
	switch {
	case failed:
		return p.period
	case fresh:
		if wasRetry {
			p.locked = true // the publication lies between the last two rounds
		}
		p.unanswered = false
		if p.crept >= p.period+p.retry {
			return p.period // swept a whole period without an empty round
		}
		nudge := p.retry
		if p.locked && p.crept < p.retry {
			nudge = p.fine
		}
		p.crept += nudge
		return p.period - nudge
	case wasRetry && p.locked:
		// The publication came later than it used to (the source's own
		// jitter, or its phase moved): one more retry before giving up.
		p.locked = false
		p.retrying = true
		return p.retry
	case wasRetry:
		// Still nothing: the source publishes less often than every
		// period. Back to the grid of the round before the retries, with
		// no more retries until a round brings something new.
		p.unanswered = true
		return max(p.grid.Sub(now), time.Millisecond)
	case p.unanswered:
		return p.period
	default:
		p.crept = 0
		p.retrying = true
		p.grid = now.Add(p.period)
		return p.retry
	}
}
