package sqs

import (
	"sync"
	"sync/atomic"
)

// Queued messages live in memory the garbage collector never has to walk:
// pointer-free record pages (slab.go) and byte chunks (chunks.go). Most of
// it is mapped from the kernel outside Go's heap, for two reasons: the
// collector's heap goal (twice the live heap at GOGC 100) does not count
// it, so a store of a gigabyte costs a gigabyte of RSS, not two; and it
// goes back to the kernel the moment a queue frees it (but for the last
// spareBytes freed, kept for the next queue that grows). The sizes chunks
// and record pages take are cut from shared blocks (arena_pool.go): those
// under bigRegion from blocks of 256 KiB, bigger ones, where the kernel has
// huge pages, from blocks of huge pages (arena_huge_linux.go); other
// big sizes are mapped alone (mapFresh). A queue's first page and chunk
// are one noscan object on Go's heap (store.firstPages), so a queue
// holding three messages costs a few hundred bytes and no mapping.
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
	if c := poolClassFor(n); c != nil {
		if r := c.take(); r.b != nil {
			if zero {
				clear(r.b)
			}
			return r
		}
	}
	if n >= bigRegion {
		if b := spares.take(n); b != nil {
			if zero {
				clear(b)
			}
			return region{b: b, mapped: true}
		}
		if b := mapFresh(n); b != nil {
			offHeap.Add(int64(len(b)))
			return region{b: b, mapped: true}
		}
	}
	return region{b: make([]byte, n)}
}

// mapFresh maps n bytes from the kernel: in huge pages when n is a
// multiple of one and the kernel gives them (arena_huge_linux.go).
func mapFresh(n int) []byte {
	if hugePages && n%hugeBlock == 0 {
		return mapHugeBlock(n)
	}
	return mapRegion(n)
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
