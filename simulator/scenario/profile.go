package scenario

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// Amount returns the usage the profile describes at simulated time t, in the
// resource's base unit (cores for CPU, bytes for memory); never negative.
// noise is a standard normal draw, used by Noisy profiles only; NoiseAt makes
// one reproducibly.
func (p Profile) Amount(t time.Duration, noise float64) float64 {
	var v float64
	switch p.Type {
	case Constant:
		v = p.Value.AsApproximateFloat64()
	case Ramp:
		from, to := p.From.AsApproximateFloat64(), p.To.AsApproximateFloat64()
		switch {
		case t <= p.Start.Duration:
			v = from
		case t >= p.Start.Duration+p.Over.Duration:
			v = to
		default:
			progress := float64(t-p.Start.Duration) / float64(p.Over.Duration)
			v = from + (to-from)*progress
		}
	case Spike:
		v = p.Value.AsApproximateFloat64()
		if t >= p.At.Duration && t < p.At.Duration+p.For.Duration {
			v = p.Peak.AsApproximateFloat64()
		}
	case Noisy:
		v = p.Value.AsApproximateFloat64() + noise*p.Stddev.AsApproximateFloat64()
	case Wave:
		phase := 2 * math.Pi * float64(t%p.Period.Duration) / float64(p.Period.Duration)
		v = p.Value.AsApproximateFloat64() + p.Amplitude.AsApproximateFloat64()*math.Sin(phase)
	}
	return max(v, 0)
}

// NoiseAt returns a standard normal draw that depends only on the seed, a key
// naming what is noisy (a pod, a resource) and the step number, so a run
// replays exactly.
func NoiseAt(seed int64, key string, step int64) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()^uint64(step)*0x9e3779b97f4a7c15))
	return rng.NormFloat64()
}
