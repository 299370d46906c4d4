package loadawarebalance

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// BenchmarkBalance measures one cycle over a cluster where a tenth of the
// nodes are hot, in dry run so every iteration sees the same cluster: it
// classifies every node, orders the hot nodes' pods and searches
// destinations for each eviction.
func BenchmarkBalance(b *testing.B) {
	for _, size := range []struct{ nodes, podsPerNode int }{{10, 30}, {100, 30}, {500, 30}} {
		b.Run(fmt.Sprintf("nodes=%d/pods=%d", size.nodes, size.nodes*size.podsPerNode), func(b *testing.B) {
			var nodes []*v1.Node
			var pods []*v1.Pod
			usage := map[string]balance.NodeLoad{}
			for i := range size.nodes {
				name := fmt.Sprintf("node-%03d", i)
				nodes = append(nodes, node(name))
				for j := range size.podsPerNode {
					pods = append(pods, pod(fmt.Sprintf("p-%03d-%02d", i, j), name, fmt.Sprintf("rs-%03d-%02d", i, j), 20))
				}
				if i%10 == 0 {
					usage[name] = balance.NodeLoad{"cpu": 40, "memory": 95}
				} else {
					usage[name] = balance.NodeLoad{"cpu": 20, "memory": 30}
				}
			}
			h := newHarness(b, args(func(a *LoadAwareBalanceArgs) {
				unlimited(a)
				a.DryRun = true
			}), nodes, pods...)
			h.source.Set(h.clock.Now(), usage)
			// Measure the decisions, not the log lines a dry run writes.
			h.plugin.Logger = logr.Discard()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.plugin.Balance(h.ctx, h.nodes)
			}
		})
	}
}
