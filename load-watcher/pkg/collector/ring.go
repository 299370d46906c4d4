package collector

import (
	"math"
	"time"
)

// point is one stored sample in 12 bytes; a resource the source did not
// report is NaN. Percentages are float32: their 7 significant digits are
// far finer than any source. The time is a millisecond offset from the
// ring's base: exact for metrics-server (seconds) and Prometheus
// (milliseconds), within a millisecond for finer clocks.
type point struct {
	ms          int32
	cpu, memory float32
}

func (p point) value(cpu bool) float64 {
	if cpu {
		return float64(p.cpu)
	}
	return float64(p.memory)
}

// ring is a fixed-size buffer of a node's newest samples: memory per node
// is bounded by the longest window divided by the period.
type ring struct {
	pts    []point
	head   int   // index of the next write
	n      int   // number of stored points
	base   int64 // Unix nanoseconds that offset 0 stands for
	newest int64 // Unix nanoseconds of the newest point, exact
}

func newRing(capacity int) ring {
	return ring{pts: make([]point, capacity)}
}

// push stores a sample taken at unixNano, which must be later than the
// newest, overwriting the oldest point when full.
func (r *ring) push(unixNano int64, cpu, memory float32) {
	if r.n == 0 {
		r.base = unixNano
	}
	off := (unixNano - r.base) / int64(time.Millisecond)
	if off > math.MaxInt32 {
		r.rebase(off)
		off = 0
	}
	r.pts[r.head] = point{ms: int32(off), cpu: cpu, memory: memory}
	r.newest = unixNano
	r.head = (r.head + 1) % len(r.pts)
	if r.n < len(r.pts) {
		r.n++
	}
}

// rebase moves the base shift milliseconds later, once in ~24 days of
// samples; points too old for an offset (older than any window) are
// dropped.
func (r *ring) rebase(shift int64) {
	r.base += shift * int64(time.Millisecond)
	kept := 0
	for i := 0; i < r.n; i++ {
		p := &r.pts[(r.head-1-i+2*len(r.pts))%len(r.pts)]
		if int64(p.ms)-shift < math.MinInt32 {
			break
		}
		p.ms = int32(int64(p.ms) - shift)
		kept++
	}
	r.n = kept
}

// newestTime returns the exact time of the most recent point.
func (r *ring) newestTime() (int64, bool) {
	return r.newest, r.n > 0
}

// since appends to dst, oldest first, the values of one resource from
// points taken after the cutoff (strictly), skipping missing ones.
func (r *ring) since(dst []float64, cutoff int64, cpu bool) []float64 {
	start := len(dst)
	for i := 0; i < r.n; i++ {
		p := r.pts[(r.head-1-i+2*len(r.pts))%len(r.pts)]
		t := r.base + int64(p.ms)*int64(time.Millisecond)
		if i == 0 {
			t = r.newest
		}
		if t <= cutoff {
			break
		}
		if v := p.value(cpu); !math.IsNaN(v) {
			dst = append(dst, v)
		}
	}
	// Collected newest first; reverse the appended part.
	for i, j := start, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst
}
