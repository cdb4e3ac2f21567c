package clock

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// Adjustable is the wall clock plus an offset that only grows: fanout's
// default clock, so that a running server can be moved forward through
// /_fanout/clock. Its timers live in one heap served by a single runtime
// timer; moving the clock forward runs whatever falls due, in order.
type Adjustable struct {
	mu sync.Mutex
	// offset is written under mu and read without it: Now runs on every
	// call of every request, from every core.
	offset  atomic.Int64 // a time.Duration
	pending timerHeap
	seq     uint64
	wake    *time.Timer
	running sync.Mutex // due work runs one batch at a time, in order
}

// NewAdjustable returns an Adjustable clock reading the wall clock.
func NewAdjustable() *Adjustable { return &Adjustable{} }

// Now returns the wall clock plus the offset.
func (a *Adjustable) Now() time.Time {
	return time.Now().Add(time.Duration(a.offset.Load()))
}

// Offset returns how far the clock has been moved ahead of the wall clock.
func (a *Adjustable) Offset() time.Duration {
	return time.Duration(a.offset.Load())
}

// AfterFunc runs f in a goroutine of the clock once d has passed on it.
func (a *Adjustable) AfterFunc(d time.Duration, f func()) Timer {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	t := &adjTimer{clock: a, mt: &manualTimer{at: time.Now().Add(time.Duration(a.offset.Load()) + d), seq: a.seq, f: f}}
	heap.Push(&a.pending, t.mt)
	a.rearmLocked()
	return t
}

// Advance moves the clock forward by d, stopping at Latest, and runs what
// falls due before it returns.
func (a *Adjustable) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	a.mu.Lock()
	// Stop at Latest; the comparison keeps offset+d from overflowing.
	off := time.Duration(a.offset.Load())
	if room := time.Until(latest) - off; d > room {
		d = max(room, 0)
	}
	a.offset.Store(int64(off + d))
	a.mu.Unlock()
	a.runDue()
}

func (a *Adjustable) runDue() {
	a.running.Lock()
	defer a.running.Unlock()
	for {
		a.mu.Lock()
		now := time.Now().Add(time.Duration(a.offset.Load()))
		if len(a.pending) == 0 || a.pending[0].at.After(now) {
			a.rearmLocked()
			a.mu.Unlock()
			return
		}
		t := heap.Pop(&a.pending).(*manualTimer)
		a.mu.Unlock()
		t.f()
	}
}

// rearmLocked points the runtime timer at the earliest pending deadline.
func (a *Adjustable) rearmLocked() {
	if len(a.pending) == 0 {
		if a.wake != nil {
			a.wake.Stop()
		}
		return
	}
	d := time.Until(a.pending[0].at.Add(-time.Duration(a.offset.Load())))
	if a.wake == nil {
		a.wake = time.AfterFunc(d, a.runDue)
		return
	}
	a.wake.Reset(d)
}

type adjTimer struct {
	clock *Adjustable
	mt    *manualTimer
}

func (t *adjTimer) Stop() bool {
	a := t.clock
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.mt.index < 0 {
		return false
	}
	heap.Remove(&a.pending, t.mt.index)
	return true
}

// Advancer is a clock that can be moved forward: Manual and Adjustable.
type Advancer interface {
	Clock
	Advance(d time.Duration)
	Offset() time.Duration
}
