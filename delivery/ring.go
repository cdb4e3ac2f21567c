package delivery

// ring keeps the last len(buf) values pushed: the bounded memory of the
// delivery records and the outbox. Callers lock around it.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

func (r *ring[T]) push(v T) {
	r.buf[r.next] = v
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

// newest calls f on the values, newest first, until f returns false.
func (r *ring[T]) newest(f func(T) bool) {
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	for i := 0; i < n; i++ {
		idx := r.next - 1 - i
		if idx < 0 {
			idx += len(r.buf)
		}
		if !f(r.buf[idx]) {
			return
		}
	}
}
