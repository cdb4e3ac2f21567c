package sqs

import "math/bits"

// record is a queued message as its queue keeps it: fixed-size fields and
// no pointers, so a page of them is one noscan object (or no Go object at
// all, arena.go). Its bytes (id, MD5s, body, attributes, rare system
// attributes) are in the queue's chunks at chunk/off; its message group and
// sender are indexes into small per-queue tables.
type record struct {
	seq            uint64 // identity within its queue, in receipt handles
	order          uint64 // delivery order (a standard queue may send a message to the back); next free slot + 1 while free
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
	handleGen      uint32 // which receive the current receipt handle belongs to
	index          int32  // position in the heap that holds it
	sender         uint16 // 1 + index in the queue's sender table; 0: none; senderInExt: in its ext
	state          msgState
	body           uint32 // its body's ref when shared (sharedbody.go), kept out of its chunk; 0: in its chunk
}

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
// holds 64 records, page p (1-6) 64<<(p-1), later pages pageRecs each: a
// small queue stays small and a large one does not copy itself as it grows.
type slab struct {
	pages []region
	recs  [][]record // recs[p] views pages[p]
	n     uint32     // slots handed out so far
	free  uint32     // 1 + the first free slot; 0: none
	live  int        // slots in use
}

const (
	pageShift = 12
	pageRecs  = 1 << pageShift
)

// locate returns the page of slot i and its place in it.
func locate(i uint32) (page, at uint32) {
	switch {
	case i >= pageRecs:
		return i>>pageShift + 6, i & (pageRecs - 1)
	case i < 64:
		return 0, i
	default:
		l := uint32(bits.Len32(i))
		return l - 6, i - 1<<(l-1)
	}
}

func pageLen(p int) int {
	switch {
	case p == 0:
		return 64
	case p <= 6:
		return 64 << (p - 1)
	}
	return pageRecs
}

func (s *slab) at(i uint32) *record {
	p, o := locate(i)
	return &s.recs[p][o]
}

// alloc returns a zeroed slot.
func (s *slab) alloc() uint32 {
	s.live++
	if s.free != 0 {
		i := s.free - 1
		r := s.at(i)
		s.free = uint32(r.order)
		*r = record{}
		return i
	}
	i := s.n
	if p, _ := locate(i); int(p) == len(s.pages) {
		reg := allocRegion(pageLen(int(p))*recordSize, true)
		s.pages = append(s.pages, reg)
		s.recs = append(s.recs, reg.records())
	}
	s.n++
	return i
}

// release puts slot i on the free list.
func (s *slab) release(i uint32) {
	r := s.at(i)
	*r = record{state: stateGone, order: uint64(s.free)}
	s.free = i + 1
	s.live--
}

// reset frees every page.
func (s *slab) reset() {
	for i := range s.pages {
		s.pages[i].free()
	}
	*s = slab{}
}
