package loadawarebalance

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
