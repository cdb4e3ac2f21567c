package sqs

import (
	"time"

	"github.com/fanout/fanout/clock"
)

// Long polls wait in a FIFO per queue and are woken one per message made
// visible, so a send to a queue with N waiting polls costs one wake-up, not N.
// Expiries (delays ending, visibility timeouts) share one clock timer per
// queue, armed only while polls wait.
//
// The invariant: a poll sleeps in the list only while nothing it could take
// is visible, or while a poll already woken (pending) has yet to run. A woken
// poll that takes messages and leaves some behind with none pending wakes the
// next; one that leaves without taking (context ended) passes its wake on.

// waiter is one long poll waiting on a queue. Its fields are guarded by the
// queue's mu.
type waiter struct {
	ch         chan struct{} // one token: woken
	prev, next *waiter
	inList     bool
	woken      bool // taken out of the list by wake, not yet run
}

// waitList is a queue's waiting polls, oldest first.
type waitList struct {
	head, tail *waiter
	pending    int // woken and not yet run

	due    clock.Timer // the next delay or visibility expiry, while polls wait
	dueAt  int64
	dueGen uint64
}

func (l *waitList) pushBack(w *waiter) {
	w.prev, w.next, w.inList = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
}

func (l *waitList) pushFront(w *waiter) {
	w.prev, w.next, w.inList = nil, l.head, true
	if l.head != nil {
		l.head.prev = w
	} else {
		l.tail = w
	}
	l.head = w
}

func (l *waitList) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next, w.inList = nil, nil, false
}

// takeable reports whether a receive could take a message now: a FIFO queue
// needs an unlocked group with messages, a standard one a visible message
// and room in flight. It may err towards true. Callers hold mu.
func (q *Queue) takeable() bool {
	if q.fifo != nil {
		return len(q.fifo.ready) > 0 && q.inflight.len() < fifoInflightLimit
	}
	return q.peekVisible() != none && q.inflight.len() < inflightLimit
}

// wake wakes the longest-waiting poll if a message can be taken: called once
// per message made visible (and once per FIFO group unlocked). Callers hold mu.
func (q *Queue) wake() {
	l := &q.waiters
	w := l.head
	if w == nil || !q.takeable() {
		return
	}
	l.remove(w)
	w.woken = true
	l.pending++
	w.ch <- struct{}{} // never blocks: a waiter is woken once per time in the list
	if l.head == nil {
		q.stopDue()
	}
}

// wait puts w in the list (a poll woken for nothing goes back to the front:
// it has waited longest) and arms the expiry timer. Callers hold mu.
func (q *Queue) wait(w *waiter, now time.Time) {
	if w.woken {
		q.waiters.pushFront(w)
	} else {
		q.waiters.pushBack(w)
	}
	w.woken = false
	if next, ok := q.nextDue(now); ok {
		q.armDue(now.UnixNano() + int64(next))
	}
}

// resume takes w out of the list as its poll runs again, and reports whether
// it had been woken. Callers hold mu.
func (q *Queue) resume(w *waiter) bool {
	switch {
	case w.inList:
		q.waiters.remove(w)
		if q.waiters.head == nil {
			q.stopDue()
		}
	case w.woken:
		q.waiters.pending--
		select { // the token of a wake that raced a timer or a cancel
		case <-w.ch:
		default:
		}
		return true
	}
	return false
}

// taken is called after a receive took messages: if more can be taken and
// no woken poll is on its way, the next waiting poll gets them. Callers hold mu.
func (q *Queue) taken() {
	if q.waiters.pending == 0 {
		q.wake()
	}
}

// roomFreed wakes polls for in-flight room that a delete or a drop at
// retention end freed on a standard queue that was full (before, its
// in-flight count then, at the limit): take left those polls asleep with
// messages visible, and such room makes nothing visible, so no send or
// expiry wakes them. One wake per freed slot; a woken poll passes on what it
// leaves (taken). A FIFO delete wakes a poll itself (it unlocks a group).
// Callers hold mu.
func (q *Queue) roomFreed(before int) {
	if q.fifo != nil || before < inflightLimit {
		return
	}
	for n := inflightLimit - q.inflight.len(); n > 0 && q.waiters.head != nil && q.takeable(); n-- {
		q.wake()
	}
}

// leave takes a poll that stops waiting (its context ended) out of the list;
// a wake it got but did not use goes to the next poll. Callers hold mu.
func (q *Queue) leave(w *waiter) {
	if q.resume(w) {
		q.wake()
	}
}

// dueAtLeast makes sure the expiry timer fires by at (unix ns) while polls
// wait: called when a message gets a time to become visible. Callers hold mu.
func (q *Queue) dueAtLeast(at int64) {
	if q.waiters.head != nil {
		q.armDue(at)
	}
}

func (q *Queue) armDue(at int64) {
	l := &q.waiters
	if l.due != nil && l.dueAt <= at {
		return
	}
	q.stopDue()
	l.dueAt = at
	gen := l.dueGen
	d := time.Duration(at - q.engine.clock.Now().UnixNano())
	l.due = q.engine.clock.AfterFunc(d, func() { q.fireDue(gen) })
}

func (q *Queue) stopDue() {
	l := &q.waiters
	if l.due != nil {
		l.due.Stop()
		l.due = nil
	}
	l.dueGen++
}

// fireDue makes visible what has come due (promote wakes a poll per message)
// and re-arms for the next expiry while polls still wait.
func (q *Queue) fireDue(gen uint64) {
	q.lock()
	defer q.unlock()
	if gen != q.waiters.dueGen || q.deleted {
		return // stopped or replaced after it fired
	}
	q.waiters.due = nil
	q.waiters.dueGen++
	now := q.engine.clock.Now()
	q.promote(now)
	if next, ok := q.nextDue(now); ok && q.waiters.head != nil {
		q.armDue(now.UnixNano() + int64(next))
	}
}
