package sim

import (
	"fmt"
	"sort"
	"strings"
)

// Target states what Ballast is expected to achieve on a built-in scenario
// and whether the comparison achieves it. Every scenario also expects no
// ping-pong.
func Target(c *Comparison) (string, bool) {
	b := c.Ballast
	var want string
	var met bool
	switch c.Scenario {
	case "homelab-mixed", "request-skew":
		want = "spread ≤ 0.5× default"
		met = c.Default.Summary.Spread > 0 && c.SpreadRatio() <= 0.5
	case "memory-hog":
		want = "no new pod on the hogged node"
		met = b.PlacedOnHog == 0
	case "new-node":
		want = "replicas end evenly spread"
		met = evenlySpread(b.Summary.Final)
	default:
		want, met = "spread below default", c.SpreadRatio() < 1
	}
	if b.PingPong != 0 {
		return want + ", no ping-pong", false
	}
	return want + ", no ping-pong", met
}

// evenlySpread reports whether every workload's pods differ by at most one
// between the nodes that can take pods.
func evenlySpread(nodes []NodeStep) bool {
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
func FinalPlacement(r *Result) string {
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
