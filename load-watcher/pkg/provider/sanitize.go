package provider

import "math"

// Verdict says what Sanitize did with a value.
type Verdict string

const (
	// Accepted values are used as they are.
	Accepted Verdict = "accepted"
	// DroppedNaN values were NaN or infinite and are discarded.
	DroppedNaN Verdict = "nan"
	// DroppedNegative values were below zero and are discarded.
	DroppedNegative Verdict = "negative"
	// ClampedOverCapacity values exceeded the node's whole capacity and were
	// lowered to it.
	ClampedOverCapacity Verdict = "over_capacity"
)

// Ceiling is the highest plausible usage, in percent of allocatable, of a
// resource with the given capacity and allocatable: the node fully busy.
// Usage can exceed 100 % of allocatable (system daemons use the reserved
// part) but never the hardware itself. Unknown amounts give 100.
func Ceiling(capacity, allocatable int64) float64 {
	if capacity <= 0 || allocatable <= 0 || capacity < allocatable {
		return 100
	}
	return 100 * float64(capacity) / float64(allocatable)
}

// Sanitize checks a raw percentage against ceiling. NaN, infinities and
// negative numbers are dropped (ok=false): they carry no information, and
// guessing 0 would claim an idle node. Values above the ceiling are clamped
// to it, since the source clearly saw a busy node but over-counted.
func Sanitize(v, ceiling float64) (out float64, verdict Verdict, ok bool) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, DroppedNaN, false
	case v < 0:
		return 0, DroppedNegative, false
	case v > ceiling:
		return ceiling, ClampedOverCapacity, true
	default:
		return v, Accepted, true
	}
}
