package delivery

import "strconv"

// ring keeps the last values pushed, at most len(buf) of them and at most
// budget bytes of what they hold: the bounded memory of the delivery
// records and the outbox. Each value gets a sequence number, newest
// highest, which pages use as their token. Callers lock around it.
type ring[T any] struct {
	buf        []T // grows up to max as values come: an idle server costs little
	max        int
	head, tail uint64 // seqs kept: tail <= s < head, at buf[s%len(buf)]
	bytes      int64
	budget     int64
	dropped    int64         // values forgotten since the start
	free       func(T) int64 // the bytes forgetting a value gives back
}

func newRing[T any](n int, budget int64, free func(T) int64) ring[T] {
	return ring[T]{max: n, budget: budget, free: free}
}

// push keeps v, which costs cost bytes, forgetting the oldest values past
// the count or the budget (never v itself), and returns v's seq.
func (r *ring[T]) push(v T, cost int64) uint64 {
	if r.head-r.tail == uint64(len(r.buf)) {
		if len(r.buf) < r.max {
			r.grow()
		} else {
			r.evict()
		}
	}
	seq := r.head
	r.buf[seq%uint64(len(r.buf))] = v
	r.head++
	r.bytes += cost
	for r.bytes > r.budget && r.head-r.tail > 1 {
		r.evict()
	}
	return seq
}

// grow doubles buf, up to max, keeping each value at its seq's place.
func (r *ring[T]) grow() {
	n := min(max(2*len(r.buf), 64), r.max)
	nb := make([]T, n)
	for s := r.tail; s < r.head; s++ {
		nb[s%uint64(n)] = r.buf[s%uint64(len(r.buf))]
	}
	r.buf = nb
}

func (r *ring[T]) evict() {
	i := r.tail % uint64(len(r.buf))
	v := r.buf[i]
	var zero T
	r.buf[i] = zero
	r.tail++
	r.dropped++
	r.bytes -= r.free(v)
}

// newest calls f on the values, newest first, starting below the page
// token after ("" for the newest), until f returns false; it returns the
// token of the page after the value f stopped at ("" when none is left).
func (r *ring[T]) newest(after string, f func(T) bool) string {
	from := r.head
	if after != "" {
		if n, err := strconv.ParseUint(after, 10, 64); err == nil && n < from {
			from = n
		}
	}
	for s := from; s > r.tail; s-- {
		if !f(r.buf[(s-1)%uint64(len(r.buf))]) {
			if s-1 > r.tail {
				return strconv.FormatUint(s-1, 10)
			}
			return ""
		}
	}
	return ""
}

// ValidPageToken reports whether s can be a page token (Next) of the
// records or the outbox.
func ValidPageToken(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return s == "" || err == nil
}
