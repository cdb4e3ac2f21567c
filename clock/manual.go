package clock

import (
	"container/heap"
	"sync"
	"time"
)

// Manual is a clock that moves only when told. Advance and Set run every
// AfterFunc that falls due, in deadline order (ties in creation order), with
// the clock reading each function's deadline while it runs.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	offset  time.Duration
	pending timerHeap
	seq     uint64
	running sync.Mutex // serialises Advance/Set so due work runs in order
}

// NewManual returns a Manual clock that reads start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Offset returns how far the clock has been moved in total.
func (m *Manual) Offset() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offset
}

// AfterFunc schedules f to run inside the Advance that passes now+d. A
// non-positive d still waits for the next Advance or Set (even by zero).
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	t := &manualTimer{clock: m, at: m.now.Add(d), seq: m.seq, f: f}
	heap.Push(&m.pending, t)
	return t
}

// Advance moves the clock forward by d, stopping at Latest, and runs what
// falls due.
func (m *Manual) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	m.running.Lock()
	defer m.running.Unlock()
	m.mu.Lock()
	target := m.now.Add(d)
	m.mu.Unlock()
	m.runUntil(target)
}

// clamp stops a target at Latest.
func clamp(t time.Time) time.Time {
	if t.After(latest) {
		return latest
	}
	return t
}

// Set moves the clock to t (never backwards, never past Latest) and runs
// what falls due.
func (m *Manual) Set(t time.Time) {
	m.running.Lock()
	defer m.running.Unlock()
	m.runUntil(t)
}

func (m *Manual) runUntil(target time.Time) {
	target = clamp(target)
	for {
		m.mu.Lock()
		if len(m.pending) == 0 || m.pending[0].at.After(target) {
			if target.After(m.now) {
				m.offset += target.Sub(m.now)
				m.now = target
			}
			m.mu.Unlock()
			return
		}
		t := heap.Pop(&m.pending).(*manualTimer)
		if t.at.After(m.now) {
			m.offset += t.at.Sub(m.now)
			m.now = t.at
		}
		m.mu.Unlock()
		t.f() // outside the lock: f may read the clock or schedule more work
	}
}

// Pending reports how many AfterFunc calls wait to run.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending)
}

type manualTimer struct {
	clock *Manual
	at    time.Time
	seq   uint64
	index int
	f     func()
}

func (t *manualTimer) Stop() bool {
	m := t.clock
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&m.pending, t.index)
	return true
}

type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
