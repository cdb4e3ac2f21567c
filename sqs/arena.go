package sqs

import (
	"sync"
	"sync/atomic"
)

// Queued messages live in memory the garbage collector never has to walk:
// pointer-free record pages (slab.go) and byte chunks (chunks.go). Large
// regions are mapped from the kernel outside Go's heap (mapRegion), for two
// reasons: the collector's heap goal (twice the live heap at GOGC 100) does
// not count them, so a store of a gigabyte costs a gigabyte of RSS, not two;
// and they go back to the kernel the moment a queue frees them (but for
// the last spareBytes freed, kept for the next queue that grows). Small
// regions come from Go's heap as noscan objects, so a queue holding three
// messages costs a few hundred bytes and 100,000 queues cost no mappings.
//
// Nothing outside package sqs ever sees this memory: every string handed out
// is a copy (render, materialize), so a region may be rewritten or unmapped
// as soon as its messages are gone.

// bigRegion is the smallest region taken from the kernel.
const bigRegion = 256 << 10

// offHeap counts the bytes mapped outside Go's heap, for the memory guard.
var offHeap atomic.Int64

// region is memory for records or message bytes.
type region struct {
	b      []byte
	mapped bool       // from mapRegion: give it back with unmapRegion
	from   *poolBlock // the block it was cut from (arena_pool.go), or nil
}

// allocRegion returns n bytes, zeroed if zero is set (record pages; a
// message's bytes are written before they are read).
func allocRegion(n int, zero bool) region {
	if n >= bigRegion {
		if b := spares.take(n); b != nil {
			if zero {
				clear(b)
			}
			return region{b: b, mapped: true}
		}
		if b := mapRegion(n); b != nil {
			offHeap.Add(int64(len(b)))
			return region{b: b, mapped: true}
		}
	}
	if c := poolClassFor(n); c != nil {
		if r := c.take(); r.b != nil {
			if zero {
				clear(r.b)
			}
			return r
		}
	}
	return region{b: make([]byte, n)}
}

func (r *region) free() {
	if r.from != nil {
		r.from.class.put(r.from, r.b)
	} else if r.mapped && !spares.keep(r.b) && unmapRegion(r.b) {
		offHeap.Add(-int64(len(r.b)))
	}
	*r = region{}
}

// spares keeps a few freed mapped regions for the next queue that grows:
// a queue consumed as fast as it is fed, emptied, or purged and filled
// again reuses its memory instead of unmapping it and mapping fresh
// memory, which the kernel must find and zero page by page (about 0.4 µs
// a KiB on a 2-core VM, more than the message's other work). At most
// spareBytes are kept, still counted as mapped (they are resident).
var spares spareRegions

const spareBytes = 16 << 20

type spareRegions struct {
	mu    sync.Mutex
	list  [][]byte
	bytes int
}

// keep takes b as a spare, unless there is no room for it.
func (s *spareRegions) keep(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+len(b) > spareBytes {
		return false
	}
	s.list = append(s.list, b)
	s.bytes += len(b)
	return true
}

// take returns a spare of n bytes, or nil.
func (s *spareRegions) take(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.list) - 1; i >= 0; i-- {
		if b := s.list[i]; len(b) == n {
			s.list = append(s.list[:i], s.list[i+1:]...)
			s.bytes -= n
			return b
		}
	}
	return nil
}

// held returns the bytes of the spares.
func (s *spareRegions) held() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.bytes)
}
