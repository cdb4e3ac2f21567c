package sqs

// The message store of one queue. Every operation is O(1) or O(log n):
//   - ready: never-received messages in send order (a ring deque);
//   - returned: messages visible again after a receive, ordered by send order
//     so that older messages come first;
//   - delayed and inflight: heaps ordered by the time they become visible.
// Time is evaluated lazily: promote moves what has come due whenever the
// queue is touched, so no ticker scans queues.

// deque is a ring buffer of messages.
type deque struct {
	buf        []*message
	head, size int
}

func (d *deque) push(m *message) {
	if d.size == len(d.buf) {
		n := len(d.buf) * 2
		if n == 0 {
			n = 64
		}
		nb := make([]*message, n)
		for i := 0; i < d.size; i++ {
			nb[i] = d.buf[(d.head+i)%len(d.buf)]
		}
		d.buf, d.head = nb, 0
	}
	d.buf[(d.head+d.size)%len(d.buf)] = m
	d.size++
}

func (d *deque) peek() *message {
	if d.size == 0 {
		return nil
	}
	return d.buf[d.head]
}

func (d *deque) pop() *message {
	if d.size == 0 {
		return nil
	}
	m := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	if d.size == 0 {
		d.head = 0
		if len(d.buf) > 4096 {
			d.buf = nil // let a drained large queue give its memory back
		}
	}
	return m
}

func (d *deque) clear() { *d = deque{} }

// msgHeap is an indexed binary heap: each message knows its position, so it
// can be removed or re-keyed in O(log n).
type msgHeap struct {
	items  []*message
	byTime bool // order by visibleAt (then seq) instead of seq
}

func (h *msgHeap) less(a, b *message) bool {
	if h.byTime && a.visibleAt != b.visibleAt {
		return a.visibleAt < b.visibleAt
	}
	return a.order < b.order
}

func (h *msgHeap) len() int { return len(h.items) }

func (h *msgHeap) peek() *message {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *msgHeap) push(m *message) {
	m.index = len(h.items)
	h.items = append(h.items, m)
	h.up(m.index)
}

func (h *msgHeap) pop() *message {
	if len(h.items) == 0 {
		return nil
	}
	return h.remove(h.items[0])
}

func (h *msgHeap) remove(m *message) *message {
	i := m.index
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items[last] = nil
	h.items = h.items[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	m.index = -1
	return m
}

func (h *msgHeap) clear() { h.items = nil }

func (h *msgHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index = i
	h.items[j].index = j
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
