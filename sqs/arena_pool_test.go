package sqs

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Pieces of the shared blocks never overlap, a zeroed one is zeroed however
// it was used before, and a block whose pieces all come back is given back,
// but for one kept for its size. Not parallel: the blocks are the process's.
func TestPoolPiecesAreDisjointAndGoBack(t *testing.T) {
	c := poolClassFor(firstChunk)
	if c == nil || c.size != firstChunk {
		t.Fatalf("no class for a first chunk")
	}
	for _, n := range []int{pageLen(0) * recordSize, pageLen(smallPages-3) * recordSize, bigRegion / 2} {
		if poolClassFor(n) == nil {
			t.Errorf("no class for %d bytes", n)
		}
	}
	for _, n := range []int{firstChunk - 1, firstChunk + 1, bigRegion, 3000} {
		if poolClassFor(n) != nil {
			t.Errorf("a class for %d bytes", n)
		}
	}
	probe := allocRegion(firstChunk, false)
	if probe.from == nil {
		t.Skip("no mmap here")
	}
	probe.free()

	c.mu.Lock()
	blocksBefore, inUseBefore := len(c.partial), c.inUse // other tests' queues may hold pieces
	c.mu.Unlock()
	n := 2*blockSize/c.size + 3 // three blocks
	pieces := make([]region, n)
	for i := range pieces {
		pieces[i] = allocRegion(c.size, false)
		if len(pieces[i].b) != c.size || cap(pieces[i].b) != c.size || pieces[i].from == nil {
			t.Fatalf("piece %d: %d bytes (cap %d), from %p", i, len(pieces[i].b), cap(pieces[i].b), pieces[i].from)
		}
		for j := range pieces[i].b {
			pieces[i].b[j] = byte(i)
		}
	}
	seen := map[uintptr]bool{}
	for i, p := range pieces {
		if !bytes.Equal(p.b, bytes.Repeat([]byte{byte(i)}, c.size)) {
			t.Fatalf("piece %d was overwritten", i)
		}
		at := uintptr(unsafe.Pointer(unsafe.SliceData(p.b)))
		if seen[at] {
			t.Fatalf("piece %d handed out twice", i)
		}
		seen[at] = true
	}
	// Three blocks' worth: new blocks, or blocks an earlier test gave back.
	blocksCut := map[*poolBlock]bool{}
	for _, p := range pieces {
		blocksCut[p.from] = true
	}
	if len(blocksCut) < 3 {
		t.Fatalf("%d pieces of %d bytes come from %d blocks", n, c.size, len(blocksCut))
	}
	for i := range pieces {
		pieces[i].free()
	}
	c.mu.Lock()
	blocks, inUse := len(c.partial), c.inUse
	c.mu.Unlock()
	if blocks > max(blocksBefore, 1) || inUse != inUseBefore {
		t.Fatalf("all pieces back: %d blocks kept (%d before), %d pieces in use (%d before)", blocks, blocksBefore, inUse, inUseBefore)
	}
	again := allocRegion(c.size, true)
	if !bytes.Equal(again.b, make([]byte, c.size)) {
		t.Fatalf("a reused piece asked for zeroed is not")
	}
	again.free()
}

// A queue dropped without being deleted gives its pieces of the shared
// blocks back once the collector finds it gone.
func TestDroppedQueueGivesPiecesBack(t *testing.T) {
	if r := allocRegion(firstChunk, false); r.from == nil {
		t.Skip("no mmap here")
	} else {
		r.free()
	}
	before := pooledBytes()
	func() {
		e, _ := newTestEngine(t)
		q := mustQueue(t, e, "dropped", nil)
		for range 40 {
			send(t, q, strings.Repeat("z", 1024))
		}
		q.lock()
		pooled, cleanup := q.msgs.pooled(), q.cleanup
		q.unlock()
		if !pooled || !cleanup {
			t.Fatalf("40 KiB of messages: pooled %v, cleanup %v", pooled, cleanup)
		}
		if pooledBytes() <= before {
			t.Fatalf("the queue's pieces are not counted")
		}
		e.mu.Lock()
		clear(e.queues) // the engine may still be referenced: the queue is not
		e.mu.Unlock()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for pooledBytes() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d pooled bytes still in use after the queue was dropped", pooledBytes()-before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// idlePoolBytes returns the bytes of the blocks kept with no piece in use.
func idlePoolBytes() int64 {
	var n int64
	for _, c := range pool {
		c.mu.Lock()
		if len(c.partial) == 1 && len(c.partial[0].free) == cap(c.partial[0].free) {
			n += blockSize
		}
		c.mu.Unlock()
	}
	return n
}

// pooledBytes returns the bytes of the pieces handed out.
func pooledBytes() int64 {
	var n int64
	for _, c := range pool {
		c.mu.Lock()
		n += int64(c.inUse * c.size)
		c.mu.Unlock()
	}
	return n
}
