package loadmodel

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Unsampled is the fraction of a pod's usage that a node's window average
// does not contain yet when the pod ran for covered before the sample:
//
//	1 − clamp(covered / window, 0, 1)
//
// all of it for a pod that started after the sample, none once the window
// has fully covered it. The scheduler adds this much of each recently bound
// pod to a node's usage (anti-herding), and the descheduler does the same for
// a destination, so that the two judge the node alike.
func Unsampled(covered, window time.Duration) float64 {
	switch {
	case covered <= 0:
		return 1
	case window <= 0 || covered >= window:
		return 0
	}
	return 1 - float64(covered)/float64(window)
}

// UsageSince is when a pod began (or will begin) to use resources, from the
// pod itself so that it survives a restart: its start time, else when it was
// bound (the PodScheduled condition), else its creation.
func UsageSince(pod *v1.Pod) time.Time {
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}
