package loadmodel

import (
	"strconv"

	"github.com/ballast-sched/ballast/core/usage"
)

// The scheduler's thresholds unless configured: LoadAware keeps pods off a
// node whose predicted usage would exceed them, and the descheduler knows a
// node over them gets no new pods.
const (
	DefaultCPUThreshold    = 85.0
	DefaultMemoryThreshold = 90.0
)

// DefaultThresholds returns a fresh map of the default thresholds.
func DefaultThresholds() map[usage.Resource]float64 {
	return map[usage.Resource]float64{usage.CPU: DefaultCPUThreshold, usage.Memory: DefaultMemoryThreshold}
}

// Violation is a resource whose predicted usage is above its threshold.
type Violation struct {
	Prediction
	// Threshold is the limit that was exceeded, in percent.
	Threshold float64
}

// Reason explains the violation with its figures, in the form the scheduler
// shows as the node's filter reason, e.g.
//
//	predicted memory usage 93.5 exceeds threshold 90 (percent of allocatable: node 88.0 + recently bound pods 3.0 + this pod 2.5)
//
// It holds no '%': kube-scheduler passes the reason to its event recorder
// as a format string, which would garble every percent sign in the pod's
// FailedScheduling event.
//
// The scheduler formats one for every node it rejects, for every pod, so it
// is appended with strconv rather than fmt (same text, a third of the CPU).
func (v Violation) Reason() string {
	var buf [192]byte
	b := append(buf[:0], "predicted "...)
	b = append(b, v.Resource...)
	b = append(b, " usage "...)
	b = strconv.AppendFloat(b, v.Total(), 'f', 1, 64)
	b = append(b, " exceeds threshold "...)
	b = strconv.AppendFloat(b, v.Threshold, 'g', -1, 64)
	b = append(b, " (percent of allocatable: node "...)
	b = strconv.AppendFloat(b, v.Current, 'f', 1, 64)
	b = append(b, " + recently bound pods "...)
	b = strconv.AppendFloat(b, v.Pending, 'f', 1, 64)
	b = append(b, " + this pod "...)
	b = strconv.AppendFloat(b, v.Pod, 'f', 1, 64)
	b = append(b, ')')
	return string(b)
}

// Exceeds reports whether the predicted usage is above threshold, or not a
// valid number (which no threshold admits).
func (p Prediction) Exceeds(threshold float64) bool {
	total := p.Total()
	return total > threshold || !Valid(total)
}

// CheckThresholds returns the predictions whose total is strictly above the
// threshold set for their resource. A resource without a threshold is never
// a violation. The result is in the order of preds; empty means the node passes.
func CheckThresholds(preds []Prediction, thresholds map[usage.Resource]float64) []Violation {
	var out []Violation
	for _, p := range preds {
		t, ok := thresholds[p.Resource]
		if !ok {
			continue
		}
		if p.Exceeds(t) {
			out = append(out, Violation{Prediction: p, Threshold: t})
		}
	}
	return out
}
