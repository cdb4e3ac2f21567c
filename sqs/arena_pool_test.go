package sqs

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
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
	for _, n := range []int{firstChunk - 1, firstChunk + 1, 3000, bigRegion + 1, 2 * maxChunk} {
		if poolClassFor(n) != nil {
			t.Errorf("a class for %d bytes", n)
		}
	}
	for _, n := range []int{bigRegion, pageRecs * recordSize, maxChunk} {
		if c := poolClassFor(n); (c != nil) != hugePages || c != nil && (c.block%hugeBlock != 0 || c.block%n > c.block/32) {
			t.Errorf("huge pages %v: class for %d bytes %+v", hugePages, n, c)
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
	freeAll(t, c, pieces, blocksBefore, inUseBefore)
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
			n += int64(c.block)
		}
		c.mu.Unlock()
	}
	return n
}

// pooledBytes returns the bytes of the pieces handed out to queues: the
// shared bodies' chunks, which are pieces too where huge pages cut big
// ones, are the process's.
func pooledBytes() int64 {
	n := -sharedBodies.held.Load()
	if poolClassFor(sharedChunkSize) == nil {
		n = 0
	}
	for _, c := range pool {
		c.mu.Lock()
		n += int64(c.inUse * c.size)
		c.mu.Unlock()
	}
	return n
}

// Where the kernel has huge pages, a queue's big chunks are pieces of
// blocks of one huge page: aligned to it, in a mapping the kernel may back
// with huge pages, and written before they are handed out (so a first
// write under a queue's lock does not fault). Their bytes stay apart, and
// the blocks go back as the small ones do.
func TestBigChunksComeFromHugePages(t *testing.T) {
	if !hugePages {
		t.Skip("the kernel gives no transparent huge pages here")
	}
	c := poolClassFor(maxChunk)
	c.mu.Lock()
	blocksBefore, inUseBefore := len(c.partial), c.inUse
	c.mu.Unlock()
	pieces := make([]region, 5)
	for i := range pieces {
		pieces[i] = allocRegion(maxChunk, false)
		p := pieces[i]
		if p.from == nil || p.from.class != c || len(p.from.b) != hugeBlock || c.block != hugeBlock {
			t.Fatalf("piece %d of %d bytes is not cut from a huge block: %+v", i, maxChunk, p)
		}
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(p.from.b))); at%hugeBlock != 0 {
			t.Fatalf("block at %#x is not aligned to a huge page", at)
		}
		for j := range p.b {
			p.b[j] = byte(i)
		}
	}
	for i, p := range pieces {
		if !bytes.Equal(p.b, bytes.Repeat([]byte{byte(i)}, maxChunk)) {
			t.Fatalf("piece %d was overwritten", i)
		}
		vma := mappingOf(t, uintptr(unsafe.Pointer(unsafe.SliceData(p.b))))
		if vma["THPeligible:"] != "1" || !slices.Contains(strings.Fields(vma["VmFlags:"]), "hg") {
			t.Fatalf("piece %d's mapping is not advised for huge pages: %v", i, vma)
		}
		t.Logf("piece %d: mapping of %s, %s in huge pages", i, vma["Size:"], vma["AnonHugePages:"])
	}
	freeAll(t, c, pieces, blocksBefore, inUseBefore)
}

// freeAll frees pieces of class c and checks that they all came back and
// that c keeps no more blocks than before, or one.
func freeAll(t *testing.T, c *poolClass, pieces []region, blocksBefore, inUseBefore int) {
	t.Helper()
	for i := range pieces {
		pieces[i].free()
	}
	c.mu.Lock()
	blocks, inUse := len(c.partial), c.inUse
	c.mu.Unlock()
	if blocks > max(blocksBefore, 1) || inUse != inUseBefore {
		t.Fatalf("all pieces back: %d blocks kept (%d before), %d pieces in use (%d before)", blocks, blocksBefore, inUse, inUseBefore)
	}
}

// mappingOf returns the fields /proc/self/smaps gives of the mapping that
// holds address at, by name ("Size:", "VmFlags:"...).
func mappingOf(t *testing.T, at uintptr) map[string]string {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps: ", err)
	}
	var fields map[string]string
	for _, line := range strings.Split(string(smaps), "\n") {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			if fields != nil {
				break
			}
			if lo <= at && at < hi {
				fields = map[string]string{}
			}
			continue
		}
		if name, value, ok := strings.Cut(line, " "); ok && fields != nil {
			fields[name] = strings.TrimSpace(value)
		}
	}
	if fields == nil {
		t.Fatalf("no mapping holds %#x", at)
	}
	return fields
}

// Takes that map fresh blocks at once, each outside the class's lock, keep
// every block they map and hand out each piece once; all go back.
func TestConcurrentTakesMapOutsideTheLock(t *testing.T) {
	c := poolClassFor(firstChunk)
	probe := allocRegion(firstChunk, false)
	if probe.from == nil {
		t.Skip("no mmap here")
	}
	probe.free()
	c.mu.Lock()
	blocksBefore, inUseBefore := len(c.partial), c.inUse
	c.mu.Unlock()
	const takers = 4
	per := 2 * blockSize / c.size // two blocks' worth each
	got := make([][]region, takers)
	var wg sync.WaitGroup
	for k := range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				got[k] = append(got[k], allocRegion(c.size, false))
			}
		}()
	}
	wg.Wait()
	var pieces []region
	seen := map[uintptr]bool{}
	for _, rs := range got {
		for _, p := range rs {
			at := uintptr(unsafe.Pointer(unsafe.SliceData(p.b)))
			if p.from == nil || seen[at] {
				t.Fatalf("piece %+v: not pooled, or handed out twice", p.from)
			}
			seen[at] = true
			pieces = append(pieces, p)
		}
	}
	c.mu.Lock()
	for i, blk := range c.partial {
		if blk.pos != i {
			t.Errorf("partial block %d says it is at %d", i, blk.pos)
		}
	}
	c.mu.Unlock()
	freeAll(t, c, pieces, blocksBefore, inUseBefore)
}
