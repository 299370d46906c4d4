package nodeload

import (
	"slices"
	"unsafe"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// nodeIndex finds a NodeInfo's place in the scheduler snapshot's node list
// from its address. Filter and Score ask it once per node and pod, mostly
// about NodeInfos the scheduler has not touched since the last pod, so it
// is built to read as little memory as it can: the NodeInfos sorted by
// address, each beside its place, and a directory that splits the
// addresses from the lowest to the highest into as many equal ranges as
// there are NodeInfos and gives, for each range, where its NodeInfos start.
// A lookup reads the directory (4 bytes a node: it stays in cache) and
// then, usually, the one slot it wants; a range that holds several is
// searched by halves. kube-scheduler allocates a NodeInfo per node as the
// nodes join, in the list's order, so NodeInfos next to each other in the
// list, which Filter visits one after the other, sit next to each other in
// the index too: a cache line of the index serves four of them, where a
// hash table (and Go's map: a group's control word, then the slot) reads a
// line at random for each (the difference, at 5 000 nodes, is in
// docs/performance.md). However the addresses lie, a lookup costs at most
// a search by halves over all of them.
//
// Go does not move heap objects, and the node list keeps its NodeInfos
// alive, so an address stands for one NodeInfo for as long as the index
// lives; were that ever not so, a lookup would miss and the caller would
// find the node by name instead, slower but right.
type nodeIndex struct {
	// slots are the NodeInfos by address.
	slots []indexSlot
	// dir[r] is the first slot of address range r; dir[len(dir)-1] is
	// len(slots).
	dir []int32
	// base is the lowest address, and an address's range is
	// (address − base) × scale / 2³².
	base  uintptr
	scale uint64
	// top is the highest address.
	top uintptr
}

type indexSlot struct {
	info *framework.NodeInfo
	pos  int32
}

func addressOf(fi *framework.NodeInfo) uintptr { return uintptr(unsafe.Pointer(fi)) }

// newNodeIndex indexes infos by their place in it; nil entries are left out.
func newNodeIndex(infos []*framework.NodeInfo) nodeIndex {
	var ix nodeIndex
	for i, fi := range infos {
		if fi != nil {
			ix.slots = append(ix.slots, indexSlot{info: fi, pos: int32(i)})
		}
	}
	if len(ix.slots) == 0 {
		return ix
	}
	slices.SortFunc(ix.slots, func(a, b indexSlot) int {
		switch x, y := addressOf(a.info), addressOf(b.info); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	ranges := len(ix.slots)
	ix.base = addressOf(ix.slots[0].info)
	// (address − base) × scale stays below ranges × 2³² for every address
	// indexed; at most one range per NodeInfo keeps that within 64 bits.
	ix.top = addressOf(ix.slots[len(ix.slots)-1].info)
	span := uint64(ix.top-ix.base) + 1
	ix.scale = (uint64(ranges) << 32) / span
	ix.dir = make([]int32, ranges+1)
	for _, s := range ix.slots {
		ix.dir[ix.rangeOf(addressOf(s.info))+1]++
	}
	for r := 1; r <= ranges; r++ {
		ix.dir[r] += ix.dir[r-1]
	}
	return ix
}

// rangeOf returns the address range of a, an address between the lowest
// and the highest indexed.
func (ix nodeIndex) rangeOf(a uintptr) int {
	return int((uint64(a-ix.base) * ix.scale) >> 32)
}

// find returns the place of fi, or -1 when the index does not hold it.
func (ix nodeIndex) find(fi *framework.NodeInfo) int {
	if fi == nil || len(ix.slots) == 0 {
		return -1
	}
	a := addressOf(fi)
	if a < ix.base || a > ix.top {
		return -1
	}
	r := ix.rangeOf(a)
	lo, hi := int(ix.dir[r]), int(ix.dir[r+1])
	for hi-lo > linearSearch {
		m := int(uint(lo+hi) >> 1)
		if addressOf(ix.slots[m].info) < a {
			lo = m + 1
		} else {
			hi = m + 1 // fi is m or before it
		}
	}
	for _, s := range ix.slots[lo:hi] {
		if s.info == fi {
			return int(s.pos)
		}
	}
	return -1
}

// linearSearch is how many slots of a range find reads one by one rather
// than by halves: four slots fill a cache line.
const linearSearch = 8
