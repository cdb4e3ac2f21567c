package sqs

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// FIFO queues: messages wait in their message group, in order; a group with
// a message in flight is locked, and only groups without one are handed out.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html

// dedupWindow is how long a deduplication id is remembered.
const dedupWindow = 5 * time.Minute

// fifoInflightLimit is the most messages a FIFO queue holds in flight.
const fifoInflightLimit = 20000

// sequenceBase makes sequence numbers look like AWS's: 20 digits, large and
// increasing but not consecutive.
const (
	sequenceBase = 18000000000000000000
	sequenceStep = 4096
)

type group struct {
	id       string
	msgs     msgHeap // visible messages, by order
	inflight int     // messages of the group in flight: while > 0 the group is locked
	size     int     // every message of the group the queue holds, in any state
	queued   bool    // in fifoState.ready
}

type dedupEntry struct {
	messageID, sequenceNumber string
	at                        time.Time
}

type dedupKey struct {
	key string
	at  time.Time
}

type attempt struct {
	at   time.Time
	msgs []*message
	gens []uint32
	out  []Received
}

type fifoState struct {
	groups   map[string]*group
	ready    []*group // groups with visible messages and none in flight, oldest first
	visible  int      // messages in group heaps
	dedup    map[string]dedupEntry
	dedupLog []dedupKey // in send order, to expire dedup ids lazily
	sequence uint64
	attempts map[string]*attempt
}

func newFifoState(fifo bool) *fifoState {
	if !fifo {
		return nil
	}
	return &fifoState{groups: map[string]*group{}, dedup: map[string]dedupEntry{}, attempts: map[string]*attempt{}}
}

func (f *fifoState) group(id string) *group {
	g := f.groups[id]
	if g == nil {
		g = &group{id: id}
		f.groups[id] = g
	}
	return g
}

// push makes m visible in its group.
func (f *fifoState) push(m *message) {
	m.state = stateReturned
	m.group.msgs.push(m)
	f.visible++
	f.markReady(m.group)
}

func (f *fifoState) markReady(g *group) {
	if !g.queued && g.inflight == 0 && g.msgs.len() > 0 {
		g.queued = true
		f.ready = append(f.ready, g)
	}
}

// nextGroup returns the next group that can hand out messages.
func (f *fifoState) nextGroup() *group {
	for len(f.ready) > 0 {
		g := f.ready[0]
		f.ready[0] = nil
		f.ready = f.ready[1:]
		g.queued = false
		if g.inflight == 0 && g.msgs.len() > 0 {
			return g
		}
	}
	f.ready = nil
	return nil
}

// forget drops a message from its group's accounting.
func (f *fifoState) forget(m *message) {
	g := m.group
	g.size--
	if g.size == 0 && !g.queued {
		delete(f.groups, g.id)
	}
}

// checkDedup returns the earlier send a deduplication key matches within the
// window, expiring old keys first. Callers hold the queue lock.
func (f *fifoState) checkDedup(key string, now time.Time) (dedupEntry, bool) {
	for len(f.dedupLog) > 0 && now.Sub(f.dedupLog[0].at) >= dedupWindow {
		k := f.dedupLog[0]
		if e, ok := f.dedup[k.key]; ok && e.at.Equal(k.at) {
			delete(f.dedup, k.key)
		}
		f.dedupLog = f.dedupLog[1:]
	}
	e, ok := f.dedup[key]
	return e, ok
}

// remember keeps key for the deduplication window. It keeps a copy: the key
// may be a slice of the request's body, which would stay alive with it for
// five minutes (a SendMessageBatch body per entry, found by the soak).
func (f *fifoState) remember(key string, e dedupEntry) {
	key = strings.Clone(key)
	f.dedup[key] = e
	f.dedupLog = append(f.dedupLog, dedupKey{key, e.at})
}

func (f *fifoState) nextSequence() string {
	f.sequence++
	return strconv.FormatUint(sequenceBase+f.sequence*sequenceStep, 10)
}

// dedupKeyFor returns the key a message is deduplicated by, per the queue's
// DeduplicationScope.
func dedupKeyFor(cfg config, groupID, dedupID string) string {
	if cfg.dedupScope == "messageGroup" {
		return groupID + "\x00" + dedupID
	}
	return dedupID
}

// contentDedupID is the id ContentBasedDeduplication derives: the SHA-256 of
// the body, attributes excluded.
func contentDedupID(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// replay returns the result of an earlier receive with the same
// ReceiveRequestAttemptId when none of its messages was deleted, changed or
// received again since. Callers hold the queue lock.
func (f *fifoState) replay(id string, now time.Time) ([]Received, bool) {
	a := f.attempts[id]
	if a == nil {
		return nil, false
	}
	if now.Sub(a.at) >= dedupWindow {
		delete(f.attempts, id)
		return nil, false
	}
	for i, m := range a.msgs {
		if m.state != stateInflight || m.handleGen != a.gens[i] {
			delete(f.attempts, id)
			return nil, false
		}
	}
	return a.out, true
}

func (f *fifoState) record(id string, now time.Time, msgs []*message, out []Received) {
	if len(f.attempts) > 10000 {
		for k, a := range f.attempts {
			if now.Sub(a.at) >= dedupWindow {
				delete(f.attempts, k)
			}
		}
	}
	gens := make([]uint32, len(msgs))
	for i, m := range msgs {
		gens[i] = m.handleGen
	}
	f.attempts[id] = &attempt{at: now, msgs: msgs, gens: gens, out: out}
}
