package balance

// hotStreaks counts, per node, the descheduling cycles in a row it was above
// a high threshold, so a short spike never triggers evictions.
type hotStreaks map[string]int32

// observe records one cycle for node and returns its streak.
func (h hotStreaks) observe(node string, above bool) int32 {
	if !above {
		delete(h, node)
		return 0
	}
	h[node]++
	return h[node]
}

// retain drops nodes not in keep, so removed nodes do not keep old streaks.
func (h hotStreaks) retain(keep map[string]bool) {
	for n := range h {
		if !keep[n] {
			delete(h, n)
		}
	}
}

// ObserveHot records one cycle of node, above a high threshold or not, and
// returns how many cycles in a row it has been above. Callers hold the lock.
func (s *Store) ObserveHot(node string, above bool) int32 { return s.streaks.observe(node, above) }

// RetainHot forgets the streaks of nodes not in keep. Callers hold the lock.
func (s *Store) RetainHot(keep map[string]bool) { s.streaks.retain(keep) }
