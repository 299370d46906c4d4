package collector

import "math"

// point is one stored sample; a resource the source did not report is NaN.
type point struct {
	unixNano    int64
	cpu, memory float64
}

func (p point) value(cpu bool) float64 {
	if cpu {
		return p.cpu
	}
	return p.memory
}

// ring is a fixed-size buffer of a node's newest samples: memory per node
// is bounded by the longest window divided by the period.
type ring struct {
	pts  []point
	head int // index of the next write
	n    int // number of stored points
}

func newRing(capacity int) ring {
	return ring{pts: make([]point, capacity)}
}

// push stores p, overwriting the oldest point when full.
func (r *ring) push(p point) {
	r.pts[r.head] = p
	r.head = (r.head + 1) % len(r.pts)
	if r.n < len(r.pts) {
		r.n++
	}
}

// newest returns the most recent point.
func (r *ring) newest() (point, bool) {
	if r.n == 0 {
		return point{}, false
	}
	return r.pts[(r.head-1+len(r.pts))%len(r.pts)], true
}

// since appends to dst, oldest first, the values of one resource from
// points taken after the cutoff (strictly), skipping missing ones.
func (r *ring) since(dst []float64, cutoff int64, cpu bool) []float64 {
	start := len(dst)
	for i := 0; i < r.n; i++ {
		p := r.pts[(r.head-1-i+2*len(r.pts))%len(r.pts)]
		if p.unixNano <= cutoff {
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
