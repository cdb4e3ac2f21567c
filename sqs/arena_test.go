package sqs

import (
	"bytes"
	"testing"
)

// A freed mapped region is kept for reuse, up to spareBytes, and a record
// page made of a reused one is zeroed as a fresh mapping is. Not parallel:
// other tests' freed regions would fill the spares.
func TestSpareRegionsAreReusedAndBounded(t *testing.T) {
	n := bigRegion + 7<<12 // a size no other region has
	var b []byte
	// An earlier test's dropped queue may free its regions at any moment
	// (a cleanup after a collection) and fill the spares between our
	// clearing them and our free; then ours is unmapped, as it should be,
	// and the round is tried again.
	for try := 0; ; try++ {
		settle()
		clearSpares()
		r := allocRegion(n, true)
		if !r.mapped {
			t.Skip("no mmap here")
		}
		b = r.b
		for i := range b {
			b[i] = 0xff
		}
		r.free()
		if sparesHold(&b[0]) {
			break
		}
		if try == 5 {
			t.Fatalf("the freed region was never kept as a spare")
		}
	}
	again := allocRegion(n, true)
	if &again.b[0] != &b[0] {
		t.Fatalf("the freed region was not reused")
	}
	if !bytes.Equal(again.b, make([]byte, n)) {
		t.Fatalf("a reused record page is not zeroed")
	}
	again.free()

	var s spareRegions
	big := make([]byte, spareBytes/2+1)
	if !s.keep(big) || s.keep(big) || s.held() != int64(len(big)) {
		t.Fatalf("spares past their bound: %d bytes held", s.held())
	}
	if s.take(len(big)-1) != nil || s.take(len(big)) == nil || s.held() != 0 || s.take(len(big)) != nil {
		t.Fatalf("take by size")
	}
}

// Regions mapped ahead are zeroed and of the size asked for, whether one
// was ready or not, and stop leaves nothing mapped and no goroutine.
func TestRegionsAheadAreZeroedAndStop(t *testing.T) {
	t.Parallel()
	a := newRegionsAhead(bigRegion)
	var taken []region
	for range 3 * cap(a.ready) {
		r := a.take()
		if len(r.b) != bigRegion || !bytes.Equal(r.b, make([]byte, bigRegion)) {
			t.Fatalf("a region of %d bytes, or not zeroed", len(r.b))
		}
		for i := range r.b {
			r.b[i] = 0xff
		}
		taken = append(taken, r)
	}
	a.stop()
	a.stop() // again: a no-op
	if len(a.ready) != 0 {
		t.Errorf("%d regions left mapped after stop", len(a.ready))
	}
	select {
	case <-a.done:
	default:
		t.Errorf("a round still runs after stop")
	}
	for i := range taken {
		taken[i].free()
	}
}

func clearSpares() {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	for _, b := range spares.list {
		if unmapRegion(b) {
			offHeap.Add(-int64(len(b)))
		}
	}
	spares.list, spares.bytes = nil, 0
}

func sparesHold(p *byte) bool {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	for _, b := range spares.list {
		if &b[0] == p {
			return true
		}
	}
	return false
}
