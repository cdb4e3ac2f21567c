package sqs

// The message store of one queue. Every operation is O(1) or O(log n):
//   - ready: never-received messages in send order (a ring deque);
//   - returned: messages visible again after a receive, ordered by send order
//     so that older messages come first;
//   - delayed and inflight: heaps ordered by the time they become visible.
// They hold record indexes (slab.go), not pointers: the collector has
// nothing to walk however many messages are queued.
// Time is evaluated lazily: promote moves what has come due whenever the
// queue is touched, so no ticker scans queues.

// deque is a ring buffer of record indexes. Its first few are held in the
// deque itself, so a queue holding a few messages keeps no ring on Go's
// heap for the collector to visit; a deque lives in its queue and is not
// copied once it holds any (buf may point into small).
type deque struct {
	buf        []uint32
	head, size int
	small      [8]uint32
}

func (d *deque) push(i uint32) {
	if d.buf == nil {
		d.buf = d.small[:]
	}
	if d.size == len(d.buf) {
		n := max(len(d.buf)*2, 64)
		nb := make([]uint32, n)
		for k := 0; k < d.size; k++ {
			nb[k] = d.at(k)
		}
		d.buf, d.head = nb, 0
	}
	d.buf[(d.head+d.size)%len(d.buf)] = i
	d.size++
}

// at returns the k-th index from the head.
func (d *deque) at(k int) uint32 { return d.buf[(d.head+k)%len(d.buf)] }

func (d *deque) peek() uint32 {
	if d.size == 0 {
		return none
	}
	return d.buf[d.head]
}

func (d *deque) pop() uint32 {
	if d.size == 0 {
		return none
	}
	i := d.buf[d.head]
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	if d.size == 0 {
		d.head = 0
		if len(d.buf) > 4096 {
			d.buf = nil // let a drained large queue give its memory back
		}
	}
	return i
}

func (d *deque) clear() { *d = deque{} }

// msgHeap is an indexed binary heap of records: each record knows its
// position, so it can be removed or re-keyed in O(log n).
type msgHeap struct {
	items  []uint32
	s      *slab
	byTime bool // order by visibleAt (then order) instead of order
}

func (h *msgHeap) less(a, b uint32) bool {
	ra, rb := h.s.at(a), h.s.at(b)
	if h.byTime && ra.visibleAt != rb.visibleAt {
		return ra.visibleAt < rb.visibleAt
	}
	return ra.order() < rb.order()
}

func (h *msgHeap) len() int { return len(h.items) }

func (h *msgHeap) peek() uint32 {
	if len(h.items) == 0 {
		return none
	}
	return h.items[0]
}

func (h *msgHeap) push(i uint32) {
	n := len(h.items)
	h.s.at(i).index = int32(n)
	h.items = append(h.items, i)
	h.up(n)
}

func (h *msgHeap) pop() uint32 {
	if len(h.items) == 0 {
		return none
	}
	i := h.items[0]
	h.remove(i)
	return i
}

func (h *msgHeap) remove(m uint32) {
	i := int(h.s.at(m).index)
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	h.s.at(m).index = -1
	if last == 0 && cap(h.items) > 4096 {
		h.items = nil // let a drained large heap give its memory back
	}
}

func (h *msgHeap) clear() { h.items = nil }

func (h *msgHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.s.at(h.items[i]).index = int32(i)
	h.s.at(h.items[j]).index = int32(j)
}

func (h *msgHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *msgHeap) down(i int) bool {
	start := i
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			c = r
		}
		if !h.less(h.items[c], h.items[i]) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
