package sqs

import (
	"maps"
	"strconv"
	"time"
	"unsafe"
)

// Durability: an engine with a Journal (Options.Journal) reports every
// change to its durable state as a Change, in the critical section that
// applies it in memory (under the lock of the queue it touches), and waits
// for the Waiter it gets back after releasing that lock, before the call
// answers. A Waiter that fails makes the call answer InternalFailure (500).
// What memory keeps then (AWS's 500 leaves the outcome unknown to the
// client):
//
//   - a send is undone when its message is still untouched (not received,
//     still where it was put) and its FIFO deduplication entry is forgotten,
//     so a retry is a new send, not a duplicate of a message that may not be
//     stored; the undo is recorded, without waiting, so the store follows;
//   - a new queue nothing has touched yet is removed again; a queue's
//     attributes, tags and permissions are put back when nothing changed
//     them since; a move task that could not be stored as started is
//     taken back;
//   - receives, deletes, visibility changes, purges and queue deletions are
//     kept. A receive answered 500 is, to its client, a receive whose reply
//     was lost, which AWS produces too: its messages come back when their
//     visibility timeout ends, the receive counted. A delete answered 500 is
//     retried by the client; the retry records the deletion again (a delete
//     of a message already gone is recorded too, so that a 200 always means
//     the deletion is stored).
//
// Without a Journal none of this runs: each mutation costs a nil check.
//
// Things that end by time alone (visibility timeouts, delays, retention,
// deduplication windows, replayable receive attempts, the 60 seconds after
// a queue's deletion) are not recorded when they end: the stored times
// decide on Restore against the engine's clock, and a store's compaction
// (Dump) writes only what is live.
//
// The engine knows nothing of how a Change is stored: internal/durable
// encodes Changes into a store's records and decodes them back for a
// Restorer.

// Journal receives an engine's state changes.
type Journal interface {
	// Record is called under the lock of the queue the change touches, in
	// the order the changes are applied; it must not block on the disk.
	// A message's MessageID, MD5OfBody and Body may be views of the
	// queue's memory, valid until Record returns: a Journal copies what it
	// keeps (encoding them does).
	Record(Change) Waiter
}

// Waiter is a recorded change on its way to durable storage.
type Waiter interface {
	// Wait returns nil once the change is durable, or why it cannot be.
	Wait() error
}

// Change is one atomic change of durable state: applied all or nothing.
// Deletions (Reset to ForgottenNames) apply before the puts of the same
// Change.
type Change struct {
	Reset          bool     // every queue, name and task of the engine is gone (Engine.Reset)
	DeletedQueues  []string // with their messages, deduplication ids and receive attempts
	Purged         []string // queues whose messages and receive attempts are gone
	Removed        []MessageRef
	ForgottenDedup []DedupState // Queue and Key are set
	ForgottenNames []string     // recently deleted names created again
	Queues         []QueueState
	// Messages are new messages (their Status is their state when sent).
	Messages []MessageRecord
	Statuses []MessageStatus
	Dedup    []DedupState
	Attempts []AttemptState
	// DeletedNames are names deleted recently (QueueDeletedRecently).
	DeletedNames []DeletedName
	MoveTasks    []MoveTaskState
}

// QueueState is a queue's durable state, its messages aside.
type QueueState struct {
	Name string
	Fifo bool
	// UID is the queue's incarnation, part of every receipt handle: kept,
	// the handles of messages in flight stay valid across a restart.
	UID uint64
	// Attributes are the settable attributes, as SetQueueAttributes takes them.
	Attributes          map[string]string
	Tags                map[string]string
	Created, Modified   time.Time
	LastPurge           time.Time `json:",omitzero"`
	SeqCeiling          uint64    // every message Seq and Order handed out is below it
	SequenceCeiling     uint64    `json:",omitzero"` // FIFO: every SequenceNumber counter handed out is below it
	DeadLetteredCounter int64     `json:",omitzero"` // messages moved to its DLQ (DeadLettered), when the state was last written
}

// MessageRef names one message of one queue.
type MessageRef struct {
	Queue string
	Seq   uint64
}

// MessageRecord is a message: what never changes, and its Status.
type MessageRecord struct {
	Queue                  string
	Seq                    uint64 // its identity in the queue, in receipt handles
	MessageID, MD5OfBody   string
	Body                   string
	Attributes             []MessageAttribute // user attributes, sorted by name
	MD5OfMessageAttributes string
	SenderID               string
	AWSTraceHeader         string
	GroupID                string
	DeduplicationID        string
	SequenceNumber         string
	DeadLetterSourceArn    string
	SentAt                 int64 // Unix nanoseconds; retention counts from it
	Status                 MessageStatus
}

// MessageStatus is what changes of a message as it is received.
type MessageStatus struct {
	Queue string
	Seq   uint64
	// Order is its place in delivery order (a standard queue may send a
	// message received three times to the back).
	Order uint64
	// State is where it was when recorded; VisibleAt decides, against the
	// clock at Restore, whether a delayed or in-flight one is still so.
	State          MessageState
	VisibleAt      int64 // Unix nanoseconds
	ReceivedAt     int64 // Unix nanoseconds of the latest receive
	FirstReceiveAt int64 // Unix milliseconds, 0 before the first receive
	ReceiveCount   int32
	ReceivesBefore int32 // ReceiveCount when it was dead-lettered into this queue
	HandleGen      uint32
}

// DedupState is one deduplication id a FIFO queue remembers.
type DedupState struct {
	Queue          string
	Key            string // the id, within its group under DeduplicationScope messageGroup
	MessageID      string
	SequenceNumber string
	At             time.Time
}

// AttemptState is a FIFO receive that a ReceiveRequestAttemptId replays:
// the messages it took (Seqs, with their receive generations) and what the
// receive asked for, so that its reply can be rendered again.
type AttemptState struct {
	Queue                 string
	ID                    string
	At                    time.Time
	Seqs                  []uint64
	Gens                  []uint32
	AttributeNames        []string // system attribute names asked for ("All" for every one)
	MessageAttributeNames []string
}

// DeletedName is a queue name deleted at At.
type DeletedName struct {
	Name string
	At   time.Time
}

// MoveTaskState is a message move task: its handle and what
// ListMessageMoveTasks reports. A running one resumes at Restore.
type MoveTaskState struct {
	Handle string
	Task   MoveTask
}

// State is everything an engine keeps durably, for Restore.
type State struct {
	Queues       []QueueState
	Messages     []MessageRecord
	Statuses     []MessageStatus
	Dedup        []DedupState
	Attempts     []AttemptState
	DeletedNames []DeletedName
	MoveTasks    []MoveTaskState
}

// seqReserve is how far a queue's stored SeqCeiling runs ahead of its
// counter: the queue's state is written again once per seqReserve sends.
const seqReserve = 1 << 16

// record hands c to the journal; callers hold the lock of what c touches.
func (e *Engine) record(c Change) Waiter {
	if e.opts.Journal == nil {
		return nil
	}
	return e.opts.Journal.Record(c)
}

// durable waits for w; a failure is the 500 AWS answers when it cannot
// tell whether a call took effect.
func durable(w Waiter) error {
	if w == nil {
		return nil
	}
	if err := w.Wait(); err != nil {
		return storeFailed()
	}
	return nil
}

func storeFailed() error {
	return ErrInternal.New("We encountered an internal error. Please try again.")
}

// waitAll waits for every non-nil waiter and returns the first failure.
func waitAll(ws ...Waiter) error {
	var first error
	for _, w := range ws {
		if err := durable(w); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// journaling reports whether q's engine records changes.
func (q *Queue) journaling() bool { return q.engine.opts.Journal != nil }

// durableAttributes are the settable attributes as Restore sets them again.
var durableAttributes = []string{
	AttrDelaySeconds, AttrMaximumMessageSize, AttrMessageRetentionPeriod, AttrReceiveMessageWaitTimeSeconds,
	AttrVisibilityTimeout, AttrPolicy, AttrRedrivePolicy, AttrRedriveAllowPolicy, AttrKmsMasterKeyID,
	AttrKmsDataKeyReusePeriodSeconds, AttrSqsManagedSseEnabled, AttrContentBasedDeduplication,
	AttrDeduplicationScope, AttrFifoThroughputLimit,
}

// state is q's durable state; it raises the ceilings it records when the
// counters near them. Callers hold mu.
func (q *Queue) state() QueueState {
	c := &q.config
	a := make(map[string]string, len(durableAttributes))
	for _, n := range durableAttributes {
		if fifoOnly[n] && !c.fifo {
			continue
		}
		v, ok := c.render(n)
		if n == AttrKmsDataKeyReusePeriodSeconds {
			v, ok = strconv.Itoa(c.kmsReuse), true
		}
		if ok {
			a[n] = v
		}
	}
	q.raiseCeilings()
	st := QueueState{Name: q.name, Fifo: q.fifo != nil, UID: q.uid, Attributes: a, Tags: maps.Clone(q.tags),
		Created: q.created, Modified: q.modified, LastPurge: q.lastPurge, SeqCeiling: q.seqCeil,
		DeadLetteredCounter: q.deadLettered.Load()}
	if q.fifo != nil {
		st.SequenceCeiling = q.fifo.sequenceCeil
	}
	return st
}

// raiseCeilings moves the stored ceilings ahead of the counters.
func (q *Queue) raiseCeilings() {
	if q.seq+seqReserve/2 >= q.seqCeil {
		q.seqCeil = q.seq + seqReserve
	}
	if f := q.fifo; f != nil && f.sequence+seqReserve/2 >= f.sequenceCeil {
		f.sequenceCeil = f.sequence + seqReserve
	}
}

// needsCeiling reports whether a counter passed half its reserve: the
// change being recorded then carries the queue's state too.
func (q *Queue) needsCeiling() bool {
	return q.seq+seqReserve/2 >= q.seqCeil || (q.fifo != nil && q.fifo.sequence+seqReserve/2 >= q.fifo.sequenceCeil)
}

// withCeiling adds q's state to c when a counter needs a new ceiling.
// Callers hold mu.
func (q *Queue) withCeiling(c *Change) {
	if q.needsCeiling() {
		c.Queues = append(c.Queues, q.state())
	}
}

// status is record i's mutable state. Callers hold mu.
func (q *Queue) status(i uint32) MessageStatus {
	r := q.rec(i)
	s := MessageStatus{Queue: q.name, Seq: r.seq, Order: r.order(), VisibleAt: r.visibleAt, ReceivedAt: r.receivedAt,
		FirstReceiveAt: r.firstReceiveAt, ReceiveCount: r.receiveCount, ReceivesBefore: r.receivesBefore, HandleGen: r.gen()}
	switch r.state {
	case stateDelayed:
		s.State = MessageDelayed
	case stateInflight:
		s.State = MessageInflight
	default:
		s.State = MessageVisible
	}
	return s
}

// message is record i as a MessageRecord (copies). Callers hold mu.
func (q *Queue) message(i uint32) MessageRecord {
	head := q.msgs.textHead(q.rec(i))
	return q.messageOf(i, head[:hexIDs], head[hexIDs:])
}

// messageView is message with its body viewing the queue's memory and its
// id and MD5 written as text into text (hexIDs bytes; nil: allocated): for
// a Change handed to Record, which copies what it keeps, not for one that
// outlives the lock or text. Callers hold mu.
func (q *Queue) messageView(i uint32, text []byte) MessageRecord {
	r := q.rec(i)
	if text == nil {
		text = make([]byte, hexIDs)
	}
	idsText(text, q.msgs.ids(r))
	body := q.msgs.body(r)
	return q.messageOf(i, unsafe.String(&text[0], hexIDs), unsafe.String(unsafe.SliceData(body), len(body)))
}

// messageOf is record i as a MessageRecord with ids (its MessageId and
// body's MD5) and body.
func (q *Queue) messageOf(i uint32, ids, body string) MessageRecord {
	r := q.rec(i)
	m := MessageRecord{Queue: q.name, Seq: r.seq, MessageID: ids[:36], MD5OfBody: ids[36:hexIDs], Body: body,
		SentAt: r.sentAt, Status: q.status(i)}
	if r.attrLen > 0 {
		m.Attributes, m.MD5OfMessageAttributes = decodeAttrs(q.msgs.attrBytes(r))
	}
	ext, sender := q.msgs.ext(r)
	if g := q.groups.of(r); g != nil {
		m.GroupID = g.id
	}
	m.SenderID, m.AWSTraceHeader, m.DeduplicationID, m.SequenceNumber, m.DeadLetterSourceArn =
		sender, ext.traceHeader, ext.dedupID, ext.sequenceNum, ext.dlqSource
	return m
}

// dedupState is a remembered deduplication entry as a DedupState.
func (q *Queue) dedupState(key string, e dedupEntry) DedupState {
	return DedupState{Queue: q.name, Key: key, MessageID: e.messageID, SequenceNumber: e.sequenceNumber, At: e.at}
}

// attemptState is a replayable receive as an AttemptState.
func (q *Queue) attemptState(id string, a *attempt) AttemptState {
	st := AttemptState{Queue: q.name, ID: id, At: a.at, Seqs: a.seqs, Gens: a.gens, MessageAttributeNames: a.req.attrNames}
	if a.req.sysAll {
		st.AttributeNames = append(st.AttributeNames, "All")
	}
	for _, n := range systemAttributeOrder {
		if a.req.sys[n] {
			st.AttributeNames = append(st.AttributeNames, n)
		}
	}
	return st
}

// update runs change under q's lock and, with a journal, records q's new
// state in the same critical section, waits for it after unlocking and
// puts the old attributes, tags and timestamps back when it cannot be
// stored and nothing changed them since. statuses, when set, adds the
// statuses change rewrote (a FIFO queue's retroactive DelaySeconds); such a
// change is kept on failure (its delays are not put back) and recorded again.
func (q *Queue) update(change func() (statuses bool, err error)) error {
	q.lock()
	if !q.journaling() {
		defer q.unlock()
		_, err := change()
		return err
	}
	cfg, tags, modified := q.config, maps.Clone(q.tags), q.modified
	statuses, err := change()
	if err != nil {
		q.unlock()
		return err
	}
	q.rev++
	rev := q.rev
	c := Change{Queues: []QueueState{q.state()}}
	if statuses {
		for _, i := range q.delayed.items {
			c.Statuses = append(c.Statuses, q.status(i))
		}
	}
	w := q.engine.record(c)
	q.unlock()
	if err := durable(w); err != nil {
		q.lock()
		if q.rev == rev && !q.deleted {
			if !statuses {
				q.config, q.tags, q.modified = cfg, tags, modified
			}
			q.rev++
			q.engine.record(Change{Queues: []QueueState{q.state()}}) // the store follows memory, whichever way the write went
		}
		q.unlock()
		return err
	}
	return nil
}

// sent is one message admit handled, for its record.
type sent struct {
	i     uint32 // its record; none for a duplicate
	seq   uint64
	key   string // FIFO: its deduplication key
	dedup dedupEntry
}

// recordSends records messages just admitted, and for duplicates their
// deduplication entry again (so that a duplicate's 200 waits for its
// original to be stored). Callers hold mu.
func (q *Queue) recordSends(list []sent) Waiter {
	c := Change{Messages: make([]MessageRecord, 0, len(list))}
	text := make([]byte, len(list)*hexIDs) // the ids' text, one allocation
	for k, s := range list {
		if s.i != none {
			c.Messages = append(c.Messages, q.messageView(s.i, text[k*hexIDs:(k+1)*hexIDs]))
		}
		if q.fifo != nil {
			c.Dedup = append(c.Dedup, q.dedupState(s.key, s.dedup))
		}
	}
	q.withCeiling(&c)
	return q.engine.record(c)
}

// undoSends takes back sends whose record could not be stored: each
// message still untouched (where it was put, never received) is dropped
// and its deduplication entry forgotten, and the undo is recorded; one a
// receive already took stays, and is recorded again.
func (q *Queue) undoSends(list []sent) {
	q.lock()
	defer q.unlock()
	if q.deleted {
		return
	}
	var c Change
	for _, s := range list {
		if s.i == none {
			continue
		}
		if q.fifo != nil {
			if e, ok := q.fifo.dedup[s.key]; ok && e == s.dedup {
				delete(q.fifo.dedup, s.key)
				c.ForgottenDedup = append(c.ForgottenDedup, DedupState{Queue: q.name, Key: s.key})
			}
		}
		if s.i >= q.msgs.slab.n {
			continue
		}
		r := q.rec(s.i)
		if r.seq != s.seq || r.state == stateGone {
			continue // gone already
		}
		if r.receiveCount > 0 || !q.unlinkFresh(s.i) {
			c.Messages = append(c.Messages, q.message(s.i))
			c.Statuses = append(c.Statuses, q.status(s.i)) // over any status stored since
			continue
		}
		q.drop(s.i)
		c.Removed = append(c.Removed, MessageRef{q.name, s.seq})
	}
	q.engine.record(c)
}

// unlinkFresh takes a never-received record out of its container when that
// is cheap: a delayed or FIFO one always, a standard ready one at the
// deque's tail (where a send just put it).
func (q *Queue) unlinkFresh(i uint32) bool {
	if q.rec(i).state == stateReady {
		if q.ready.size == 0 || q.ready.at(q.ready.size-1) != i {
			return false
		}
		q.ready.size--
		if q.ready.size == 0 {
			q.ready.head = 0
		}
		return true
	}
	q.unlink(i)
	return true
}

// recordReceive records the statuses of the records a receive took
// (q.took) and its replayable attempt. Callers hold mu.
func (q *Queue) recordReceive(attemptID string) Waiter {
	if len(q.took) == 0 {
		return nil
	}
	c := Change{Statuses: make([]MessageStatus, len(q.took))}
	for k, i := range q.took {
		c.Statuses[k] = q.status(i)
	}
	q.took = q.took[:0]
	if attemptID != "" {
		if a := q.fifo.attempts[attemptID]; a != nil {
			c.Attempts = []AttemptState{q.attemptState(attemptID, a)}
		}
	}
	return q.engine.record(c)
}

// recordReplay records again what a replayed receive returns, so that its
// 200 waits for the receive being stored. Callers hold mu.
func (q *Queue) recordReplay(id string) Waiter {
	a := q.fifo.attempts[id]
	c := Change{Attempts: []AttemptState{q.attemptState(id, a)}}
	for _, i := range a.msgs {
		c.Statuses = append(c.Statuses, q.status(i))
	}
	return q.engine.record(c)
}
