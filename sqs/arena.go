package sqs

import (
	"sync/atomic"
	"unsafe"
)

// Queued messages live in memory the garbage collector never has to walk:
// pointer-free record pages (slab.go) and byte chunks (chunks.go). Large
// regions are mapped from the kernel outside Go's heap (mapRegion), for two
// reasons: the collector's heap goal (twice the live heap at GOGC 100) does
// not count them, so a store of a gigabyte costs a gigabyte of RSS, not two;
// and they go back to the kernel the moment a queue frees them. Small
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
	mapped bool // from mapRegion: give it back with unmapRegion
}

func allocRegion(n int) region {
	if n >= bigRegion {
		if b := mapRegion(n); b != nil {
			offHeap.Add(int64(len(b)))
			return region{b: b, mapped: true}
		}
	}
	return region{b: make([]byte, n)}
}

func (r *region) free() {
	if r.mapped && unmapRegion(r.b) {
		offHeap.Add(-int64(len(r.b)))
	}
	*r = region{}
}

// records views a region as records. The region is at least 8-byte aligned
// (page-aligned when mapped, a size-class slot of Go's heap otherwise) and
// records hold no pointers, so the collector never needs to know.
func (r *region) records() []record {
	n := len(r.b) / int(unsafe.Sizeof(record{}))
	return unsafe.Slice((*record)(unsafe.Pointer(unsafe.SliceData(r.b))), n)
}
