package nodeload

import (
	"math/bits"
	"unsafe"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// nodeIndex finds a NodeInfo's place in the scheduler snapshot's node list
// from its address. Filter and Score ask it once per node and pod, so it is
// built for that one question: open addressing over an array at most two
// thirds full, each slot holding the NodeInfo and its place side by side, so that
// a probe usually reads one cache line, where Go's map reads a group's
// control word and then the slot (the difference, at 5 000 nodes, is in
// docs/performance.md).
//
// The hash is the NodeInfo's address. Go does not move heap objects, and
// the node list keeps its NodeInfos alive, so an address stands for one
// NodeInfo for as long as the index lives; were that ever not so, a lookup
// would miss and the caller would find the node by name instead, slower
// but right.
type nodeIndex struct {
	slots []indexSlot
	// shift keeps the hash's top bits: as many as the slots need.
	shift uint
}

type indexSlot struct {
	info *framework.NodeInfo
	pos  int32
}

// newNodeIndex indexes infos by their place in it; nil entries are left out.
func newNodeIndex(infos []*framework.NodeInfo) nodeIndex {
	// A power of two, more than one and a half times as many as NodeInfos.
	size := 1 << bits.Len(uint(len(infos)+len(infos)/2))
	ix := nodeIndex{slots: make([]indexSlot, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
	mask := uint64(size - 1)
	for i, fi := range infos {
		if fi == nil {
			continue
		}
		h := ix.hash(fi)
		for ix.slots[h].info != nil {
			h = (h + 1) & mask
		}
		ix.slots[h] = indexSlot{info: fi, pos: int32(i)}
	}
	return ix
}

// hash spreads an address over the slots (Fibonacci hashing: the top bits
// of the address times 2⁶⁴ over the golden ratio).
func (ix nodeIndex) hash(fi *framework.NodeInfo) uint64 {
	return (uint64(uintptr(unsafe.Pointer(fi))) * 0x9E3779B97F4A7C15) >> ix.shift
}

// find returns the place of fi, or -1 when the index does not hold it.
func (ix nodeIndex) find(fi *framework.NodeInfo) int {
	if fi == nil {
		return -1
	}
	mask := uint64(len(ix.slots) - 1)
	for h := ix.hash(fi); ; h = (h + 1) & mask {
		switch s := &ix.slots[h]; s.info {
		case fi:
			return int(s.pos)
		case nil:
			return -1
		}
	}
}
