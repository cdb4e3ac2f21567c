package sqs

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// FIFO queues: messages wait in their message group, in order; a group with
// a message in flight is locked, and only groups without one are handed out.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html

// dedupWindow is how long a deduplication id is remembered.
const dedupWindow = 5 * time.Minute

// fifoInflightLimit is the most messages a FIFO queue holds in flight:
// 120,000, as AWS's FIFO quotas give it now (it was 20,000); at it a
// receive returns nothing, with no error.
const fifoInflightLimit = 120000

// sequenceBase makes sequence numbers look like AWS's: 20 digits, large and
// increasing but not consecutive.
const (
	sequenceBase = 18000000000000000000
	sequenceStep = 4096
)

// group is a message group: of a FIFO queue, or of a fair queue (a standard
// queue whose messages carry a MessageGroupId), where only inflight and size
// are used. Records name it by index (record.group).
type group struct {
	id       string
	idx      uint32  // 1 + its place in the group table; 0 once removed
	msgs     msgHeap // FIFO: visible messages, by order
	inflight int     // messages of the group in flight: while > 0 a FIFO group is locked
	size     int     // every message of the group the queue holds, in any state
	queued   bool    // FIFO: in fifoState.ready
}

// groupTable is a queue's message groups, by id and by index.
type groupTable struct {
	byID map[string]*group
	list []*group // by idx-1; nil: a free slot
	free []uint32
}

// get returns the group called id, making it when needed.
func (t *groupTable) get(id string, s *slab) *group {
	if g := t.byID[id]; g != nil {
		return g
	}
	if t.byID == nil {
		t.byID = map[string]*group{}
	}
	g := &group{id: strings.Clone(id), msgs: msgHeap{s: s}}
	if n := len(t.free); n > 0 {
		g.idx = t.free[n-1] + 1
		t.free = t.free[:n-1]
		t.list[g.idx-1] = g
	} else {
		t.list = append(t.list, g)
		g.idx = uint32(len(t.list))
	}
	t.byID[g.id] = g
	return g
}

// of returns the group of r, or nil.
func (t *groupTable) of(r *record) *group {
	if r.group == 0 {
		return nil
	}
	return t.list[r.group-1]
}

// remove forgets g; removing it twice changes nothing.
func (t *groupTable) remove(g *group) {
	if g.idx == 0 {
		return
	}
	delete(t.byID, g.id)
	t.list[g.idx-1] = nil
	t.free = append(t.free, g.idx-1)
	g.idx = 0
}

type dedupEntry struct {
	messageID, sequenceNumber string
	at                        time.Time
}

type dedupKey struct {
	key string
	at  time.Time
}

// attempt is a receive a ReceiveRequestAttemptId can replay: the records it
// took, with their seq (a slot may be reused) and receive generation.
type attempt struct {
	at   time.Time
	msgs []uint32
	seqs []uint64
	gens []uint32
	out  []Received
	req  receiveReq // what it asked for, to record it (journal.go)
}

type fifoState struct {
	ready    []*group // groups with visible messages and none in flight, oldest first
	visible  int      // messages in group heaps
	dedup    map[string]dedupEntry
	dedupLog []dedupKey // in send order, to expire dedup ids lazily
	sequence uint64
	attempts map[string]*attempt
	// sequenceCeil is the stored ceiling of sequence (journal.go).
	sequenceCeil uint64
}

func newFifoState(fifo bool) *fifoState {
	if !fifo {
		return nil
	}
	return &fifoState{dedup: map[string]dedupEntry{}, attempts: map[string]*attempt{}}
}

// fifoPush makes record i visible in its group. Callers hold mu.
func (q *Queue) fifoPush(i uint32) {
	r := q.rec(i)
	r.state = stateReturned
	g := q.groups.of(r)
	g.msgs.push(i)
	q.fifo.visible++
	q.fifo.markReady(g)
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
func (f *fifoState) remember(key string, e dedupEntry) string {
	key = strings.Clone(key)
	f.dedup[key] = e
	f.dedupLog = append(f.dedupLog, dedupKey{key, e.at})
	return key
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
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(body), len(body))) // read-only view, no copy
	return hex.EncodeToString(sum[:])
}

// replay returns the result of an earlier receive with the same
// ReceiveRequestAttemptId when none of its messages was deleted, changed or
// received again since. Callers hold the queue lock.
func (q *Queue) replay(id string, now time.Time) ([]Received, bool) {
	f := q.fifo
	a := f.attempts[id]
	if a == nil {
		return nil, false
	}
	if now.Sub(a.at) >= dedupWindow {
		delete(f.attempts, id)
		return nil, false
	}
	for k, i := range a.msgs {
		if i == none || i >= q.msgs.slab.n {
			delete(f.attempts, id)
			return nil, false
		}
		if r := q.rec(i); r.state != stateInflight || r.seq != a.seqs[k] || r.gen() != a.gens[k] {
			delete(f.attempts, id)
			return nil, false
		}
	}
	return a.out, true
}

func (q *Queue) record(req receiveReq, now time.Time, msgs []uint32, out []Received) {
	id := req.attemptID
	f := q.fifo
	if len(f.attempts) > 10000 {
		for k, a := range f.attempts {
			if now.Sub(a.at) >= dedupWindow {
				delete(f.attempts, k)
			}
		}
	}
	a := &attempt{at: now, msgs: msgs, seqs: make([]uint64, len(msgs)), gens: make([]uint32, len(msgs)), out: out, req: req}
	for k, i := range msgs {
		r := q.rec(i)
		a.seqs[k], a.gens[k] = r.seq, r.gen()
	}
	f.attempts[id] = a
}
