package nodeload

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func newInfos(n int) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, n)
	for i := range out {
		out[i] = framework.NewNodeInfo()
	}
	return out
}

// Every NodeInfo indexed is found at its place, whatever the size and
// however its address lies among the others (allocated one after the
// other, spread unevenly, most of them in a crowd and one far away, in the
// reverse of the list's order); one not indexed, a copy of an indexed one,
// a nil one and a nil entry are not.
func TestNodeIndexFindsEveryNodeInfo(t *testing.T) {
	layouts := map[string]func(n int) []*framework.NodeInfo{
		"in order": newInfos,
		// Gaps growing with the place: most in a crowd at the start.
		"spread unevenly": func(n int) []*framework.NodeInfo {
			out := make([]*framework.NodeInfo, n)
			backing := make([]framework.NodeInfo, n*n/8+n)
			for i := range out {
				out[i] = &backing[i*i/8+i]
				*out[i] = *framework.NewNodeInfo()
			}
			return out
		},
		"crowd and one far away": func(n int) []*framework.NodeInfo {
			out := newInfos(n)
			if n > 1 {
				_ = make([]byte, 64<<20)
				out[n/2] = framework.NewNodeInfo()
			}
			return out
		},
		"reversed": func(n int) []*framework.NodeInfo {
			out := newInfos(n)
			slices.Reverse(out)
			return out
		},
	}
	for name, layout := range layouts {
		for _, n := range []int{0, 1, 2, 3, 5, 64, 1000, 5000} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				testNodeIndexFinds(t, layout(n))
			})
		}
	}
}

func testNodeIndexFinds(t *testing.T, infos []*framework.NodeInfo) {
	n := len(infos)
	{
		if n > 2 {
			infos[1] = nil // a list entry without a node
		}
		ix := newNodeIndex(infos)
		for i, fi := range infos {
			if fi == nil {
				continue
			}
			if got := ix.find(fi); got != i {
				t.Fatalf("%d NodeInfos: find(infos[%d]) = %d", n, i, got)
			}
		}
		for _, other := range newInfos(50) {
			if got := ix.find(other); got != -1 {
				t.Fatalf("%d NodeInfos: a NodeInfo not indexed found at %d", n, got)
			}
		}
		if n > 0 && infos[0] != nil {
			if got := ix.find(infos[0].Snapshot().(*framework.NodeInfo)); got != -1 {
				t.Errorf("%d NodeInfos: a copy of infos[0] found at %d", n, got)
			}
		}
		if got := ix.find(nil); got != -1 {
			t.Errorf("%d NodeInfos: find(nil) = %d", n, got)
		}
	}
}

// BenchmarkNodeLookup compares the index with a Go map from NodeInfo to
// place, 500 NodeInfos in a row from a rotating start, as Filter visits
// them (in cache here: a running scheduler's misses are not in it).
func BenchmarkNodeLookup(b *testing.B) {
	for _, n := range []int{500, 5000} {
		infos := newInfos(n)
		ix := newNodeIndex(infos)
		m := make(map[*framework.NodeInfo]int32, n)
		for i, fi := range infos {
			m[fi] = int32(i)
		}
		var sum int
		b.Run(fmt.Sprintf("nodes=%d/index", n), func(b *testing.B) {
			start := 0
			for b.Loop() {
				for i := range 500 {
					sum += ix.find(infos[(start+i)%n])
				}
				start = (start + 997) % n
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/map", n), func(b *testing.B) {
			start := 0
			for b.Loop() {
				for i := range 500 {
					sum += int(m[infos[(start+i)%n]])
				}
				start = (start + 997) % n
			}
		})
		_ = sum
	}
}
