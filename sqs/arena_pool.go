package sqs

import (
	"slices"
	"sync"
	"unsafe"
)

// Small regions (a queue's first record pages and its first chunks, 1 KiB
// to 128 KiB) are cut from mapped blocks that all queues share, rather than
// taken from Go's heap. A block is mapped populated, so the kernel faults
// its 64 pages in one call; Go's heap grows page by page, a trap for each,
// which on a VM costs about twice as much. With 100,000 queues taking their
// first messages, that was most of what a 1 KiB send cost over one queue's.
// Blocks are also outside the collector's heap goal, as big regions are.
//
// A block holds pieces of one size. A block with none in use goes back to
// the spares (arena.go), unless it is its size's last one with room, which
// is kept so that a queue taking and freeing one piece does not map and
// unmap a block each time.
//
// Where the kernel has huge pages, the sizes of bigRegion and more that
// chunks and record pages take (up to maxChunk) are cut the same way from
// blocks of huge pages (arena_huge_linux.go), one or as many as the pieces
// fill: a big region is too small to be a huge page of its own.

const blockSize = bigRegion

type poolBlock struct {
	b     []byte
	free  []uint32 // offsets of the pieces not in use
	pos   int      // index in its class's partial list; -1: not in it (full)
	class *poolClass
}

type poolClass struct {
	mu      sync.Mutex
	size    int
	block   int          // bytes of its blocks
	partial []*poolBlock // blocks with a piece free
	inUse   int          // pieces handed out
}

// pool has a class for each size of chunk (firstChunk growing) and of
// record page (slab.go) that a block holds with little left over, smallest
// first: under bigRegion, and with huge pages up to maxChunk. Other sizes
// come from Go's heap, or big ones are mapped alone.
var pool = poolClasses(hugePages)

func poolClasses(huge bool) []*poolClass {
	blockFor := func(n int) int {
		if n < bigRegion {
			return blockSize
		}
		// A full page of records (352 KiB) tiles no huge block exactly: 17
		// fill 6 MiB but for 160 KiB, where a 2 MiB block would waste 14 %.
		for b := hugeBlock; b <= 4*hugeBlock; b += hugeBlock {
			if b%n <= b/32 {
				return b
			}
		}
		return hugeBlock
	}
	most := bigRegion - 1
	if huge {
		most = maxChunk
	}
	var sizes []int
	for n := firstChunk; n <= most; n = growChunk(n) {
		if blockFor(n)%n <= blockFor(n)/16 {
			sizes = append(sizes, n)
		}
	}
	for p := 0; p <= smallPages+1; p++ {
		if n := pageLen(p) * recordSize; n <= most && blockFor(n)%n <= blockFor(n)/16 && !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	slices.Sort(sizes)
	classes := make([]*poolClass, len(sizes))
	for i, n := range sizes {
		classes[i] = &poolClass{size: n, block: blockFor(n)}
	}
	return classes
}

// poolClassFor returns the class that cuts pieces of exactly n bytes, or nil.
func poolClassFor(n int) *poolClass {
	i, ok := slices.BinarySearchFunc(pool, n, func(c *poolClass, n int) int { return c.size - n })
	if !ok {
		return nil
	}
	return pool[i]
}

// take returns a piece, or a region with nothing in it when no block can be
// mapped (the caller then uses Go's heap).
func (c *poolClass) take() region {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.partial) == 0 {
		b := spares.take(c.block)
		if b == nil {
			// Populating a block takes milliseconds (tens where the host
			// must back it): not while every queue that takes from this
			// class waits. Two that map at once both keep their block.
			c.mu.Unlock()
			b = mapFresh(c.block)
			c.mu.Lock()
			if b == nil {
				return region{}
			}
			offHeap.Add(int64(len(b)))
		}
		blk := &poolBlock{b: b, class: c, free: make([]uint32, 0, c.block/c.size)}
		for off := (c.block/c.size - 1) * c.size; off >= 0; off -= c.size {
			blk.free = append(blk.free, uint32(off)) // lowest offset on top
		}
		blk.pos = len(c.partial) // another take may have added one meanwhile
		c.partial = append(c.partial, blk)
	}
	blk := c.partial[len(c.partial)-1]
	c.inUse++
	off := blk.free[len(blk.free)-1]
	blk.free = blk.free[:len(blk.free)-1]
	if len(blk.free) == 0 {
		c.unlist(blk)
	}
	return region{b: blk.b[off : int(off)+c.size : int(off)+c.size], from: blk}
}

// put takes back piece b of blk.
func (c *poolClass) put(blk *poolBlock, b []byte) {
	off := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(blk.b))))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inUse--
	blk.free = append(blk.free, off)
	if blk.pos < 0 {
		blk.pos = len(c.partial)
		c.partial = append(c.partial, blk)
	}
	if len(blk.free) < cap(blk.free) || len(c.partial) == 1 {
		return
	}
	c.unlist(blk) // nothing in it is in use, and another block has room
	if !spares.keep(blk.b) && unmapRegion(blk.b) {
		offHeap.Add(-int64(len(blk.b)))
	}
	blk.b = nil
}

// unlist removes blk from the partial list.
func (c *poolClass) unlist(blk *poolBlock) {
	last := c.partial[len(c.partial)-1]
	c.partial[blk.pos] = last
	last.pos = blk.pos
	c.partial[len(c.partial)-1] = nil
	c.partial = c.partial[:len(c.partial)-1]
	blk.pos = -1
}
