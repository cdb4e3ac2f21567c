package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The soak's checks. Every message body starts with "k=<key>;" (a key unique
// in the run) and, on FIFO queues, "g=<group>;n=<n>;" where n counts 1, 2, 3
// ... within the group in the order the group's one producer sent them.
// A ledger per queue holds what was acknowledged and not yet received:
//
//   - at-least-once: every acknowledged send is received (and then deleted)
//     by the end of the drain, or it is lost;
//   - FIFO order: a receive hands out a group's messages starting right after
//     the last one deleted, consecutively;
//   - no two of a group in flight: a receive returns no message of a group
//     another receive holds (received, neither deleted nor released, and its
//     visibility timeout not yet over).
//
// Consumers record a release (delete or ChangeMessageVisibility 0) before
// the call that makes it, so a receive the release allows can never be seen
// before it.

const (
	stAcked = 1 // the send was acknowledged; not yet received
	stEarly = 2 // received before its send's acknowledgement was recorded
)

// violationSample is how many violation descriptions a report keeps.
const violationSample = 10

type ledger struct {
	mu          sync.Mutex
	pending     map[uint64]uint8
	outstanding int // acknowledged and not yet received
	acked       int64
	deleted     int64    // received for deletion
	dups        int64    // received for deletion again
	done        []uint64 // bit k: key k was acknowledged and received
	groups      map[string]*groupState

	order, inflight, expired int64
	samples                  []string
}

type groupState struct {
	released int64 // n of the last message deleted
	held     bool  // some receive holds messages of it
	heldAt   time.Time
	tainted  bool // a delete or release failed: what follows is not checkable
}

func newLedger() *ledger {
	return &ledger{pending: map[uint64]uint8{}, groups: map[string]*groupState{}}
}

func (l *ledger) note(format string, args ...any) {
	if len(l.samples) < violationSample {
		l.samples = append(l.samples, fmt.Sprintf(format, args...))
	}
}

// ack records acknowledged sends.
func (l *ledger) ack(keys ...uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		l.acked++
		if l.pending[k] == stEarly {
			delete(l.pending, k)
			l.markDone(k)
			continue
		}
		l.pending[k] = stAcked
		l.outstanding++
	}
}

// deleting records a message received and about to be deleted.
func (l *ledger) deleting(k uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deleted++
	switch {
	case l.pending[k] == stAcked:
		delete(l.pending, k)
		l.outstanding--
		l.markDone(k)
	case l.pending[k] == stEarly || l.isDone(k):
		l.dups++
	default:
		l.pending[k] = stEarly
	}
}

// markDone and isDone keep a bit per key (keys count up from 1 over the
// whole run: a million keys cost 128 KiB), so a repeat is told apart from a
// receive that overtook its send's acknowledgement.
func (l *ledger) markDone(k uint64) {
	for uint64(len(l.done))*64 <= k {
		l.done = append(l.done, 0)
	}
	l.done[k/64] |= 1 << (k % 64)
}

func (l *ledger) isDone(k uint64) bool {
	return k/64 < uint64(len(l.done)) && l.done[k/64]&(1<<(k%64)) != 0
}

func (l *ledger) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.outstanding
}

// fifoMsg is the FIFO part of a received body.
type fifoMsg struct {
	group string
	n     int64
}

// fifoReceived checks one receive's FIFO messages, in the order it returned
// them, and marks their groups held. vis is the queue's visibility timeout.
func (l *ledger) fifoReceived(now time.Time, vis time.Duration, msgs []fifoMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := map[string]int64{}
	for _, m := range msgs {
		st := l.groups[m.group]
		if st == nil {
			st = &groupState{}
			l.groups[m.group] = st
		}
		want, seen := next[m.group]
		if !seen {
			want = st.released + 1
			if st.held && !st.tainted {
				// A little slack under the visibility timeout: a holder that
				// stalled that long has lost its hold, as on AWS.
				if now.Sub(st.heldAt) < vis-5*time.Second {
					l.inflight++
					l.note("group %s: message %d received while another receive holds the group (since %v)", m.group, m.n, now.Sub(st.heldAt).Round(time.Millisecond))
				} else {
					l.expired++
				}
			}
			st.held, st.heldAt = true, now
		}
		if m.n != want && !st.tainted {
			l.order++
			l.note("group %s: received message %d, expected %d", m.group, m.n, want)
		}
		next[m.group] = m.n + 1
	}
}

// fifoRelease records, before the call, that a receive lets go of a group:
// deletedUpTo is the n of the last message it deletes, or 0 when it makes
// them visible again.
func (l *ledger) fifoRelease(group string, deletedUpTo int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.groups[group]
	st.held = false
	if deletedUpTo > 0 {
		st.released = deletedUpTo
	}
}

// taint stops checking a group whose delete or release failed: its messages
// return after their visibility timeout, in an order no check can predict.
func (l *ledger) taint(group string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.groups[group].tainted = true
}

// tally is a ledger's end state.
type tally struct {
	acked, deleted, lost, early, dups int64
	order, inflight, expired          int64
	groups, tainted                   int
	samples                           []string
}

func (l *ledger) tally() tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := tally{acked: l.acked, deleted: l.deleted, dups: l.dups, order: l.order, inflight: l.inflight,
		expired: l.expired, groups: len(l.groups), samples: append([]string(nil), l.samples...)}
	for _, s := range l.pending {
		if s == stAcked {
			t.lost++
		} else {
			t.early++
		}
	}
	for _, g := range l.groups {
		if g.tainted {
			t.tainted++
		}
	}
	return t
}

func (t *tally) add(o tally) {
	t.acked += o.acked
	t.deleted += o.deleted
	t.lost += o.lost
	t.early += o.early
	t.dups += o.dups
	t.order += o.order
	t.inflight += o.inflight
	t.expired += o.expired
	t.groups += o.groups
	t.tainted += o.tainted
	for _, s := range o.samples {
		if len(t.samples) < violationSample {
			t.samples = append(t.samples, s)
		}
	}
}

// soakBody builds a body of about size bytes for key k (and, on FIFO
// queues, group g and number n).
func soakBody(k uint64, group string, n int64, pad string) string {
	var b strings.Builder
	b.WriteString("k=")
	b.WriteString(strconv.FormatUint(k, 36))
	b.WriteByte(';')
	if group != "" {
		b.WriteString("g=" + group + ";n=" + strconv.FormatInt(n, 10) + ";")
	}
	if b.Len() < len(pad) {
		b.WriteString(pad[b.Len():])
	}
	return b.String()
}

// parseSoakBody reads what soakBody wrote; ok is false for a body it did
// not write.
func parseSoakBody(body string) (k uint64, m fifoMsg, ok bool) {
	field := func(name string) (string, bool) {
		rest, found := strings.CutPrefix(body, name+"=")
		if !found {
			return "", false
		}
		v, after, found := strings.Cut(rest, ";")
		body = after
		return v, found
	}
	ks, ok := field("k")
	if !ok {
		return 0, m, false
	}
	k, err := strconv.ParseUint(ks, 36, 64)
	if err != nil {
		return 0, m, false
	}
	if g, found := field("g"); found {
		ns, found := field("n")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !found || err != nil {
			return 0, m, false
		}
		m = fifoMsg{group: g, n: n}
	}
	return k, m, true
}
