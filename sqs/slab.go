package sqs

import (
	"math"
	"math/bits"
	"unsafe"
)

// record is a queued message as its queue keeps it: fixed-size fields and
// no pointers, so a page of them is one noscan object (or no Go object at
// all, arena.go). Its bytes (id, MD5s, body, attributes, rare system
// attributes) are in the queue's chunks at chunk/off; its message group and
// sender are indexes into small per-queue tables.
type record struct {
	seq            uint64 // identity within its queue, in receipt handles
	sentAt         int64  // original enqueue time, Unix nanoseconds; retention counts from it
	visibleAt      int64  // Unix nanoseconds when it becomes (or became) visible
	receivedAt     int64  // Unix nanoseconds of the latest receive, for the 12-hour cap
	firstReceiveAt int64  // Unix milliseconds
	chunk, off     uint32 // where its bytes start
	bodyLen        uint32
	attrLen        uint32 // encoded user attributes, MD5 first (attrs.go); 0: none
	extLen         uint32 // encoded rare system attributes (ext.go); 0: none
	group          uint32 // 1 + index in the queue's group table; 0: no MessageGroupId
	receiveCount   int32
	// receivesBefore is receiveCount when it was dead-lettered into this
	// queue: maxReceiveCount counts only the receives from this queue.
	receivesBefore int32
	index          int32  // position in the heap that holds it
	later          uint32 // its delivery order past seq (order); next free slot + 1 while free
	sender         uint16 // 1 + index in the queue's sender table; 0: none; senderInExt: in its ext
	state          msgState
	body           uint32 // its body's ref when shared (sharedbody.go), kept out of its chunk; 0: in its chunk
}

// order is r's place in delivery order: its seq, or later once a standard
// queue has sent it to the back. Kept as a distance from seq, not a second
// counter, since a record is a large share of a small message's memory.
func (r *record) order() uint64 { return r.seq + uint64(r.later) }

// setOrder places r at order o; an o below r.seq (0 in older records) is
// r.seq. A distance past what later holds (four billion sends within a
// message's retention) is clamped: order only ranks a standard queue's
// best-effort delivery.
func (r *record) setOrder(o uint64) {
	r.later = uint32(min(o-min(o, r.seq), math.MaxUint32))
}

// gen is which receive of the message the current receipt handle belongs
// to: its receives from this queue, which is also what each receive counts
// up, so it needs no field of its own.
func (r *record) gen() uint32 { return uint32(r.receiveCount - r.receivesBefore) }

// size is how many chunk bytes the record's message takes.
func (r *record) size() uint32 { return bodyAt + r.inlineBody() + r.attrLen + r.extLen }

// inlineBody is how many bytes of its body are in its chunk.
func (r *record) inlineBody() uint32 {
	if r.body != 0 {
		return 0
	}
	return r.bodyLen
}

type msgState uint8

const (
	stateReady    msgState = iota // in the ready deque
	stateReturned                 // visible again, in the returned heap (FIFO: its group's heap)
	stateDelayed                  // in the delayed heap
	stateInflight                 // in the in-flight heap
	stateGone                     // deleted, expired, purged or moved: a free slot
)

// none is "no record" where a record index is expected.
const none = ^uint32(0)

// slab holds a queue's records in pages that never move, so a *record stays
// valid until the slot is freed or the queue compacts (compact.go). Page 0
// holds firstRecs records, page p (1 to smallPages) firstRecs<<(p-1), later
// pages pageRecs each: a small queue stays small (a queue with one message
// holds a page of 1.4 KiB, so 100,000 such queues take 140 MiB of records,
// not the 600 MiB pages of 64 took), and a large one does not copy itself
// as it grows.
//
// Page 0 is held in the slab itself and the later pages in a slice, and a
// record is found from its page's bytes: a queue holding a few messages is
// then one object on Go's heap for its records, not three (the page, a
// slice of pages and a slice of their record views), and with 100,000 such
// queues every collection marks 200,000 objects fewer.
type slab struct {
	page0 region
	pages []region // page p at p-1
	n     uint32   // slots handed out so far
	free  uint32   // 1 + the first free slot; 0: none
	live  int      // slots in use
	// staged is the next page, mapped by lockWithRoom outside the queue's
	// lock; tidy drops it when the sends that asked for it did not use it.
	staged region
}

const (
	pageShift  = 12
	pageRecs   = 1 << pageShift
	firstShift = 4
	firstRecs  = 1 << firstShift
	smallPages = pageShift - firstShift // pages 1 to smallPages double
)

// locate returns the page of slot i and its place in it.
func locate(i uint32) (page, at uint32) {
	switch {
	case i >= pageRecs:
		return i>>pageShift + smallPages, i & (pageRecs - 1)
	case i < firstRecs:
		return 0, i
	default:
		l := uint32(bits.Len32(i))
		return l - firstShift, i - 1<<(l-1)
	}
}

func pageLen(p int) int {
	switch {
	case p == 0:
		return firstRecs
	case p <= smallPages:
		return firstRecs << (p - 1)
	}
	return pageRecs
}

// at returns slot i, which must be below n: locate keeps o within page p,
// whose region holds pageLen(p) records. A region is at least 8-byte
// aligned (page-aligned when mapped, a size-class slot of Go's heap
// otherwise) and records hold no pointers, so the collector never needs to
// know that its bytes are records.
func (s *slab) at(i uint32) *record {
	p, o := locate(i)
	b := s.page0.b
	if p != 0 {
		b = s.pages[p-1].b
	}
	return (*record)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), uintptr(o)*uintptr(recordSize)))
}

// pageCount returns how many pages the slab holds.
func (s *slab) pageCount() int {
	if s.page0.b == nil {
		return 0
	}
	return 1 + len(s.pages)
}

// addPage appends page reg, of pageLen(pageCount()) records.
func (s *slab) addPage(reg region) {
	if s.page0.b == nil {
		s.page0 = reg
		return
	}
	s.pages = append(s.pages, reg)
}

// alloc returns a zeroed slot.
func (s *slab) alloc() uint32 {
	s.live++
	if s.free != 0 {
		i := s.free - 1
		r := s.at(i)
		s.free = r.later
		*r = record{}
		return i
	}
	i := s.n
	if p, _ := locate(i); int(p) == s.pageCount() {
		page, n := s.staged, pageLen(int(p))*recordSize
		s.staged = region{}
		if len(page.b) != n {
			page.free()
			page = allocRegion(n, true)
		}
		s.addPage(page)
	}
	s.n++
	return i
}

// pageFor is the size of the page that k more slots would take, the next
// one, or 0 when the free list or the pages have room for them, or one is
// staged.
func (s *slab) pageFor(k int) int {
	if k <= 0 || s.free != 0 || s.staged.b != nil {
		return 0
	}
	if p, _ := locate(s.n + uint32(k) - 1); int(p) == s.pageCount() {
		return pageLen(int(p)) * recordSize
	}
	return 0
}

// stage keeps the zeroed page r for the next page alloc adds.
func (s *slab) stage(r region) {
	s.staged.free()
	s.staged = r
}

// release puts slot i on the free list.
func (s *slab) release(i uint32) {
	r := s.at(i)
	*r = record{state: stateGone, later: s.free}
	s.free = i + 1
	s.live--
}

// reset frees every page.
func (s *slab) reset() {
	s.staged.free()
	s.page0.free()
	for i := range s.pages {
		s.pages[i].free()
	}
	*s = slab{}
}
