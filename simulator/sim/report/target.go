package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// MaxEvictionsOverNeeded bounds Ballast's evictions from hot nodes as a
// multiple of the fewest that would bring those nodes under the
// descheduler's high thresholds.
const MaxEvictionsOverNeeded = 1.5

// Target states what Ballast is expected to achieve on a scenario (its
// target, or "spread below default" for a scenario without one) and whether
// the comparison achieves it. Every scenario also expects no loop (a move
// undone while nothing changed), fewer evictions per point of spread
// removed than the peer's where both move pods, no
// node left over a scheduler threshold for more than the target's hot
// cycles, and evictions from hot nodes at most MaxEvictionsOverNeeded × the
// fewest needed.
func Target(c *record.Comparison) (string, bool) {
	b := c.Ballast
	t := c.Target
	if t == nil {
		t = &scenario.Target{HotCycles: scenario.DefaultHotCycles}
	}
	var want []string
	met := true
	check := func(ok bool, text string) {
		want = append(want, text)
		met = met && ok
	}
	switch {
	case t.SpreadRatio > 0:
		check(c.Default.Summary.Spread > 0 && c.SpreadRatio() <= t.SpreadRatio && b.Summary.Spread <= c.BestPeerSpread(),
			fmt.Sprintf("spread ≤ %g× default", t.SpreadRatio)+peerSpreadWant(c))
	case !t.NoPodsOnHog && !t.EvenReplicas && t.MaxEvictions == nil && t.SpreadOverOracle == 0:
		check(c.SpreadRatio() < 1 && b.Summary.Spread <= c.BestPeerSpread(), "spread below default"+peerSpreadWant(c))
	}
	if t.SpreadOverOracle > 0 && c.Oracle != nil {
		check(b.Summary.Spread <= c.Oracle.Spread+t.SpreadOverOracle,
			fmt.Sprintf("spread ≤ oracle's %.1f + %g", c.Oracle.Spread, t.SpreadOverOracle))
	}
	if t.NoPodsOnHog {
		check(b.PlacedOnHog == 0, "no new pod on a hogged node")
	}
	if t.EvenReplicas {
		check(evenlySpread(b.Summary.Final), "replicas end evenly spread")
	}
	if t.MaxEvictions != nil {
		check(b.Evictions <= int(*t.MaxEvictions), fmt.Sprintf("≤ %d evictions", *t.MaxEvictions))
	}
	check(b.HotCycles <= int(t.HotCycles), fmt.Sprintf("hot ≤ %d cycles", t.HotCycles))
	check(float64(b.HotEvictions) <= MaxEvictionsOverNeeded*float64(b.NeededEvictions), "evictions ≤ 1.5× needed")
	check(b.Loops == 0, "no loop")
	if c.Peer != nil {
		// Wherever both move pods, Ballast restarts fewer of them for each
		// point of spread it removes.
		if ours, moved := c.EvictionsPerPoint(b); moved {
			if theirs, peerMoved := c.EvictionsPerPoint(c.Peer); peerMoved {
				check(ours < theirs || math.IsInf(theirs, 1) && !math.IsInf(ours, 1), "evictions per point removed below the peer's")
			}
		}
	}
	if b.UnmovableMoves > 0 {
		// Named only when missed: a DaemonSet's, StatefulSet's or Job's
		// pod moved is a bug whatever the scenario.
		check(false, "no pod moved that nothing may move")
	}
	check(sameWorkloads(b.Growing, t.Growing), growingWant(t.Growing))
	return strings.Join(want, ", "), met
}

// sameWorkloads reports whether the workloads reported growing are exactly
// want: a leak warning about a workload that does not leak is as wrong as
// a leak missed.
func sameWorkloads(reported map[string]float64, want []string) bool {
	if len(reported) != len(want) {
		return false
	}
	for _, w := range want {
		if _, ok := reported[w]; !ok {
			return false
		}
	}
	return true
}

func growingWant(want []string) string {
	if len(want) == 0 {
		return "none reported growing"
	}
	return strings.Join(want, ", ") + " reported growing, no other"
}

// peerSpreadWant is what a spread target adds when the upstream peer ran:
// Ballast's spread is at most the best other stack's.
func peerSpreadWant(c *record.Comparison) string {
	if c.Peer == nil {
		return ""
	}
	return " and ≤ best peer's"
}

// evenlySpread reports whether every workload's pods differ by at most one
// between the nodes that can take pods.
func evenlySpread(nodes []record.NodeStep) bool {
	counts := map[string][]int{}
	var schedulable int
	for _, n := range nodes {
		if n.Cordoned {
			continue
		}
		schedulable++
		for w, k := range n.Workloads {
			counts[w] = append(counts[w], k)
		}
	}
	for _, k := range counts {
		for len(k) < schedulable {
			k = append(k, 0)
		}
		sort.Ints(k)
		if k[len(k)-1]-k[0] > 1 {
			return false
		}
	}
	return true
}

// FinalPlacement describes where each workload's pods are at the end, as
// "web: node-a 3, node-b 3".
func FinalPlacement(r *record.Result) string {
	byWorkload := map[string][]string{}
	for _, n := range r.Summary.Final {
		for w, k := range n.Workloads {
			byWorkload[w] = append(byWorkload[w], fmt.Sprintf("%s %d", n.Node, k))
		}
	}
	names := make([]string, 0, len(byWorkload))
	for w := range byWorkload {
		names = append(names, w)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, w := range names {
		parts = append(parts, w+": "+strings.Join(byWorkload[w], ", "))
	}
	return strings.Join(parts, "; ")
}
