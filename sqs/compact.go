package sqs

// A queue's memory stays proportional to what it holds. Slots freed by
// deletes are reused by later sends, and chunks emptied by in-order
// consumption are freed at once (chunks.go); what is left is holes: records
// and bytes of messages deleted out of order, and slots of a queue that
// shrank. tidy, run before the queue's lock is released, frees everything
// of a queue left empty, and rewrites a queue's live messages into fresh
// records and chunks once the slots handed out pass twice the live ones or
// the bytes written pass twice the live bytes. Each rewrite costs what is
// live, and at least as much was deleted since the last, so its cost per
// message is O(1) amortised.

const (
	compactSlack       = 8192    // slots a queue may hold beyond twice its live ones
	compactByteSlack   = 4 << 20 // bytes beyond twice the live ones
	keepWhenEmpty      = 64      // slots an empty queue keeps (its first three pages, 6 KiB)
	keepBytesWhenEmpty = 64 << 10
)

// tidy is called with mu held, before it is released.
func (q *Queue) tidy() {
	q.watchStore()
	s := q.msgs
	if s.chunks.staged.b != nil {
		s.chunks.stage(region{}) // lockWithRoom's, left unused
	}
	if s.slab.staged.b != nil {
		s.slab.stage(region{})
	}
	switch {
	case s.slab.live == 0:
		if s.slab.n > keepWhenEmpty || s.chunks.held > keepBytesWhenEmpty {
			s.slab.reset()
			s.chunks.reset()
		}
	case s.slab.n > 2*uint32(s.slab.live)+compactSlack && q.dumping == 0: // a Dump walks the slots
		q.compactRecords()
	case s.chunks.written > 2*s.chunks.live+compactByteSlack:
		q.compactBytes()
	}
}

// compactBytes rewrites the live messages' bytes, in slot order, into fresh
// chunks. Records stay where they are.
func (q *Queue) compactBytes() {
	s := q.msgs
	var fresh chunks
	for i := range s.slab.n {
		r := s.slab.at(i)
		if r.state == stateGone {
			continue
		}
		var buf []byte
		chunk, off := r.chunk, r.off
		r.chunk, r.off, buf = fresh.reserve(r.size())
		copy(buf, s.chunks.slot(chunk).mem.b[off:off+r.size()])
	}
	s.chunks.reset()
	s.chunks = fresh
}

// compactRecords moves the live records, in slot order, into a fresh slab
// and renumbers every container that holds their indexes. Their bytes stay
// where they are.
func (q *Queue) compactRecords() {
	s := q.msgs
	old := s.slab
	s.slab = slab{}
	remap := make([]uint32, old.n)
	for i := range old.n {
		r := old.at(i)
		if r.state == stateGone {
			remap[i] = none
			continue
		}
		j := s.slab.alloc()
		*s.slab.at(j) = *r
		remap[i] = j
	}
	old.reset()
	// The ready deque, packed from its head.
	ready := deque{buf: make([]uint32, max(64, q.ready.size))}
	for k := range q.ready.size {
		ready.buf[k] = remap[q.ready.at(k)]
	}
	ready.size = q.ready.size
	q.ready = ready
	renumber := func(h *msgHeap) {
		items := make([]uint32, len(h.items))
		for k, i := range h.items {
			items[k] = remap[i]
		}
		h.items = items
	}
	renumber(&q.returned)
	renumber(&q.delayed)
	renumber(&q.inflight)
	for _, g := range q.groups.list {
		if g != nil {
			renumber(&g.msgs)
		}
	}
	for seq, i := range q.handles {
		q.handles[seq] = remap[i]
	}
	if q.fifo != nil {
		for _, a := range q.fifo.attempts {
			for k, i := range a.msgs {
				if i < uint32(len(remap)) {
					a.msgs[k] = remap[i]
				} else {
					a.msgs[k] = none
				}
			}
		}
	}
}
