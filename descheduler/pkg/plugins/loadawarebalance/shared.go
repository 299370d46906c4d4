package loadawarebalance

import (
	"time"
)

// The methods below let other Ballast balance plugins share one Store, so
// that what one plugin moved the others neither undo nor repeat. Callers
// hold the lock around a whole cycle, as Balance does.

// Lock takes the memory for one descheduling cycle.
func (s *Store) Lock() { s.mu.Lock() }

// Unlock releases the memory.
func (s *Store) Unlock() { s.mu.Unlock() }

// Remember records that a pod of w was evicted from source at at and is
// expected on destination, with the pod's estimated share of each node.
func (s *Store) Remember(w Workload, source, destination string, at time.Time, sourceLoad, destinationLoad NodeLoad) {
	s.remember(&move{workload: w, source: source, destination: destination, at: at,
		sourceLoad: sourceLoad, destinationLoad: destinationLoad})
}

// Bounced reports whether, within cooldown, a pod of w was moved off node
// and a replacement landed back on it. LandedBack must have run first.
func (s *Store) Bounced(w Workload, node string, now time.Time, cooldown time.Duration) bool {
	for _, m := range s.moves {
		if m.workload == w && m.source == node && now.Sub(m.at) < cooldown && m.landedBack.Len() > 0 {
			return true
		}
	}
	return false
}

// MovedOff reports whether, within cooldown, a pod of w was moved off
// node: sending it back there would undo that move.
func (s *Store) MovedOff(w Workload, node string, now time.Time, cooldown time.Duration) bool {
	for _, m := range s.moves {
		if m.workload == w && m.source == node && now.Sub(m.at) < cooldown {
			return true
		}
	}
	return false
}
