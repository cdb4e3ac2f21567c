package sqs

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/awserr"
)

// Queue is one SQS queue. All its state is guarded by mu.
type Queue struct {
	// What a send touches comes first, in a few cache lines: sending to a
	// random one of many queues finds each queue cold, and every line of
	// it the send reads is a miss.
	mu      sync.Mutex // through lock and unlock only: they check the lock order (doc.go)
	deleted bool
	// cleanup is set once the queue's store has a cleanup to give back
	// its mapped memory (watchStore).
	cleanup bool
	engine  *Engine
	seq     uint64
	msgs    *store     // the records and bytes the containers below index
	fifo    *fifoState // FIFO queues only
	// dumping counts the Dumps walking the slots, which compaction must
	// not renumber meanwhile (journal.go).
	dumping int
	ready   deque
	waiters waitList // long polls waiting for a message (waiters.go)
	config  config

	name      string
	arn       string
	uid       uint64 // incarnation id, so receipt handles die with the queue
	created   time.Time
	modified  time.Time
	lastPurge time.Time
	tags      map[string]string // nil until the first tag: most queues have none
	returned  msgHeap
	delayed   msgHeap
	inflight  msgHeap
	handles   map[uint64]uint32 // seq -> record, received at least once and not gone; nil until the first
	// Message groups: of a FIFO queue, or of a fair queue (a standard queue
	// whose messages carry MessageGroupIds), with groupsOutSum its
	// messages of any group in flight.
	groups       groupTable
	groupsOutSum int
	// gone is closed when the queue is deleted; the first long poll to
	// wait makes it (goneChan), as most queues never see one. Deleted
	// reads dead, which needs no lock.
	gone chan struct{}
	dead atomic.Bool
	// deadLettered counts messages moved to the DLQ, for the dashboard.
	deadLettered atomic.Int64

	// Durability (journal.go), used only with a Journal: rev counts the
	// recorded changes of attributes and tags; seqCeil is the stored
	// ceiling of seq; took gathers the records a receive delivered.
	rev     uint64
	seqCeil uint64
	took    []uint32
}

func newQueue(e *Engine, name string, fifo bool, now time.Time) *Queue {
	return newQueueOf(e, name, fifo, now, &store{})
}

// newQueueOf makes a queue whose messages' memory is msgs (a Restorer's).
// An empty queue is a few objects on the heap, as the collector marks
// every object of every queue in each cycle: 100,000 queues cost each
// collection that many times what one does. Its maps are made by their
// first entry, and its name is the end of its ARN.
func newQueueOf(e *Engine, name string, fifo bool, now time.Time, msgs *store) *Queue {
	arn := e.Arn(name)
	q := &Queue{
		engine:   e,
		name:     arn[len(arn)-len(name):],
		arn:      arn,
		uid:      newUID(),
		config:   defaultConfig(fifo),
		created:  now,
		modified: now,
		msgs:     msgs,
		returned: msgHeap{s: &msgs.slab},
		delayed:  msgHeap{s: &msgs.slab, byTime: true},
		inflight: msgHeap{s: &msgs.slab, byTime: true},
		fifo:     newFifoState(fifo),
	}
	q.watchStore()
	return q
}

// watchStore makes sure that a queue dropped without being deleted (an
// engine a test forgets) still gives its memory outside Go's heap (mapped
// regions, pieces of the shared blocks) and its references to shared bodies
// back, once its store holds any. Called at creation and by tidy (every
// unlock).
func (q *Queue) watchStore() {
	if q.cleanup {
		return
	}
	if s := q.msgs; s.chunks.held >= bigRegion || s.slab.n > pageRecs || s.sharedRefs > 0 || s.pooled() {
		runtime.AddCleanup(q, (*store).release, s)
		q.cleanup = true
	}
}

// handle records that received message seq is record i. Callers hold mu.
func (q *Queue) handle(seq uint64, i uint32) {
	if q.handles == nil {
		q.handles = map[uint64]uint32{}
	}
	q.handles[seq] = i
}

// rec returns record i. Callers hold mu.
func (q *Queue) rec(i uint32) *record { return q.msgs.at(i) }

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Arn returns the queue's ARN.
func (q *Queue) Arn() string { return q.arn }

// DeadLettered counts the messages moved from this queue to its
// dead-letter queue after maxReceiveCount receives.
func (q *Queue) DeadLettered() int64 { return q.deadLettered.Load() }

// Fifo reports whether this is a FIFO queue.
// q.fifo is set at creation and never replaced, so this needs no lock;
// q.config.fifo, though never changed either, is rewritten with the rest of
// the config by SetAttributes (a race the admin listing met).
func (q *Queue) Fifo() bool { return q.fifo != nil }

// Deleted reports whether the queue was deleted (DeleteQueue, Reset): one
// that keeps a *Queue checks it before each use.
func (q *Queue) Deleted() bool { return q.dead.Load() }

// goneChan returns the channel closed when the queue is deleted. Callers
// hold mu, and the queue is not deleted.
func (q *Queue) goneChan() <-chan struct{} {
	if q.gone == nil {
		q.gone = make(chan struct{})
	}
	return q.gone
}

func (q *Queue) cfg() config {
	q.lock()
	defer q.unlock()
	return q.config
}

// markDeleted ends the queue and returns its last seq. With a journal and
// a time of deletion, it records the deletion and the name deleted at that
// time, under the queue's lock: after every change of the queue, and before
// any of a queue made again under its name.
func (q *Queue) markDeleted(at time.Time) (uint64, Waiter) {
	q.lock()
	defer q.unlock()
	q.deleted = true
	q.dead.Store(true)
	q.resetMessages()
	q.stopDue()
	if q.gone != nil {
		close(q.gone)
	}
	var w Waiter
	if !at.IsZero() {
		w = q.engine.record(Change{DeletedQueues: []string{q.name}, DeletedNames: []DeletedName{{q.name, at}}})
	}
	return q.seq, w
}

// retentionExpired reports whether r has outlived the retention period.
func (q *Queue) retentionExpired(r *record, now time.Time) bool {
	return now.UnixNano() >= r.sentAt+int64(q.config.retentionPeriod)*int64(time.Second)
}

// drop forgets record i for good and frees it. Callers have already taken
// it out of its container.
func (q *Queue) drop(i uint32) {
	r := q.rec(i)
	if r.receiveCount > 0 {
		delete(q.handles, r.seq)
	}
	if g := q.groups.of(r); g != nil {
		if g.size--; g.size == 0 && !g.queued {
			q.groups.remove(g)
		}
	}
	q.msgs.forget(r)
	q.msgs.slab.release(i)
}

// enterInflight and leaveInflight keep the per-group in-flight counts: the
// lock of a FIFO group, the noisy-neighbour accounting of a fair queue.
func (q *Queue) enterInflight(i uint32) {
	r := q.rec(i)
	r.state = stateInflight
	q.inflight.push(i)
	q.dueAtLeast(r.visibleAt)
	if g := q.groups.of(r); g != nil {
		g.inflight++
		if q.fifo == nil {
			q.groupsOutSum++
		}
	}
}

// leaveInflight is called after record i left the in-flight heap.
func (q *Queue) leaveInflight(i uint32) {
	if g := q.groups.of(q.rec(i)); g != nil {
		g.inflight--
		if q.fifo == nil {
			q.groupsOutSum--
		}
	}
}

// makeVisible puts a message that was delayed or in flight where receives
// find it, and wakes a waiting poll for it. Callers hold mu.
func (q *Queue) makeVisible(i uint32) {
	if q.fifo != nil {
		q.fifoPush(i)
	} else {
		q.rec(i).state = stateReturned
		q.returned.push(i)
	}
	q.wake()
}

// promote moves what has come due by now: delayed messages whose delay ended
// and in-flight messages whose visibility timeout ended. It reports whether
// anything became visible. Callers hold mu.
func (q *Queue) promote(now time.Time) bool {
	moved := false
	n := now.UnixNano()
	for i := q.delayed.peek(); i != none && q.rec(i).visibleAt <= n; i = q.delayed.peek() {
		q.delayed.pop()
		if q.retentionExpired(q.rec(i), now) {
			q.drop(i)
			continue
		}
		q.makeVisible(i)
		moved = true
	}
	for i := q.inflight.peek(); i != none && q.rec(i).visibleAt <= n; i = q.inflight.peek() {
		q.inflight.pop()
		q.leaveInflight(i)
		r := q.rec(i)
		if q.retentionExpired(r, now) {
			g := q.groups.of(r)
			q.drop(i)
			q.roomFreed(q.inflight.len() + 1)
			if q.fifo != nil {
				// As a delete does: the group's later messages may go out.
				q.fifo.markReady(g)
				q.wake()
			}
			continue
		}
		if rp := q.config.redrive; q.fifo == nil && rp != nil && rp.MaxReceiveCount > 3 && r.receiveCount == 3 {
			// AWS sends a standard-queue message received three times without
			// deletion to the back of the queue.
			q.seq++
			r.setOrder(q.seq)
		}
		q.makeVisible(i)
		moved = true
	}
	for i := q.ready.peek(); i != none && q.retentionExpired(q.rec(i), now); i = q.ready.peek() {
		q.drop(q.ready.pop())
	}
	return moved
}

// nextDue returns how long until something hidden becomes visible, or
// false when nothing is hidden. Callers hold mu.
func (q *Queue) nextDue(now time.Time) (time.Duration, bool) {
	var at int64
	found := false
	if i := q.delayed.peek(); i != none {
		at, found = q.rec(i).visibleAt, true
	}
	if i := q.inflight.peek(); i != none && (!found || q.rec(i).visibleAt < at) {
		at, found = q.rec(i).visibleAt, true
	}
	if !found {
		return 0, false
	}
	return time.Duration(at - now.UnixNano()), true
}

// popVisible takes the oldest visible message. Callers hold mu.
func (q *Queue) popVisible() uint32 {
	switch i := q.peekVisible(); {
	case i == none:
		return none
	case i == q.ready.peek():
		return q.ready.pop()
	default:
		return q.returned.pop()
	}
}

// peekVisible returns the message popVisible would take. Callers hold mu.
func (q *Queue) peekVisible() uint32 {
	r, h := q.ready.peek(), q.returned.peek()
	if h == none || (r != none && q.rec(r).order() < q.rec(h).order()) {
		return r
	}
	return h
}

// Attributes returns the named attributes (All for every one) in AWS's order.
func (q *Queue) Attributes(names []string) ([]Attribute, error) {
	want := map[string]bool{}
	all := false
	for _, n := range names {
		if !readable[n] {
			return nil, ErrInvalidAttributeName.New("Unknown Attribute %s.", n)
		}
		if n == AttrAll {
			all = true
		}
		want[n] = true
	}
	if len(names) == 0 {
		return nil, nil
	}
	q.lock()
	defer q.unlock()
	now := q.engine.clock.Now()
	q.promote(now)
	var out []Attribute
	for _, n := range attributeOrder {
		if !all && !want[n] {
			continue
		}
		if v, ok := q.attribute(n); ok {
			out = append(out, Attribute{n, v})
		}
	}
	return out, nil
}

// Attribute is a name and its string value.
type Attribute struct{ Name, Value string }

func (q *Queue) attribute(name string) (string, bool) {
	switch name {
	case AttrQueueArn:
		return q.arn, true
	case AttrApproximateNumberOfMessages:
		if q.fifo != nil {
			return strconv.Itoa(q.fifo.visible), true
		}
		return strconv.Itoa(q.ready.size + q.returned.len()), true
	case AttrApproximateNotVisible:
		return strconv.Itoa(q.inflight.len()), true
	case AttrApproximateDelayed:
		return strconv.Itoa(q.delayed.len()), true
	case AttrCreatedTimestamp:
		return strconv.FormatInt(q.created.Unix(), 10), true
	case AttrLastModifiedTimestamp:
		return strconv.FormatInt(q.modified.Unix(), 10), true
	}
	return q.config.render(name)
}

// SetAttributes validates and applies attributes, all or none.
func (q *Queue) SetAttributes(attrs map[string]string) error {
	// The RedrivePolicy's target is read before this queue's lock is taken:
	// never two queue locks at once (doc.go).
	targets := q.engine.redriveTargets(attrs, q.arn)
	return q.update(func() (bool, error) { return q.setAttributes(attrs, targets) })
}

// setAttributes applies attrs and reports whether it changed delayed
// messages' delays. Callers hold mu.
func (q *Queue) setAttributes(attrs map[string]string, targets redriveTargets) (bool, error) {
	if err := q.config.apply(attrs, false, q.arn, targets); err != nil {
		return false, err
	}
	q.modified = q.engine.clock.Now()
	if _, ok := attrs[AttrDelaySeconds]; ok && q.fifo != nil {
		// On FIFO queues the queue delay is retroactive for messages still
		// waiting out their delay.
		d := time.Duration(q.config.delaySeconds) * time.Second
		items := q.delayed.items
		q.delayed.items = nil
		for _, i := range items {
			r := q.rec(i)
			r.visibleAt = r.sentAt + int64(d)
			q.delayed.push(i)
		}
		// Delays may now end sooner: the polls' expiry timer starts again.
		q.stopDue()
		if next, ok := q.nextDue(q.modified); ok {
			q.dueAtLeast(q.modified.UnixNano() + int64(next))
		}
		return q.delayed.len() > 0, nil
	}
	return false, nil
}

// sameAttributes checks CreateQueue's attributes against an existing queue.
func (q *Queue) sameAttributes(attrs map[string]string) *awserr.Error {
	q.lock()
	defer q.unlock()
	for _, n := range sortedKeys(attrs) {
		v := attrs[n]
		if n == AttrFifoQueue {
			if (v == "true") != q.config.fifo {
				return ErrQueueNameExists.New("A queue already exists with the same name and a different value for attribute %s", n)
			}
			continue
		}
		probe := q.config
		if err := probe.set(n, v, true); err != nil {
			return err
		}
		cur, _ := q.config.render(n)
		next, _ := probe.render(n)
		if cur != next {
			return ErrQueueNameExists.New("A queue already exists with the same name and a different value for attribute %s", n)
		}
	}
	return nil
}

// Purge deletes every message in the queue.
func (q *Queue) Purge() error {
	q.lock()
	now := q.engine.clock.Now()
	if !q.lastPurge.IsZero() && !q.engine.opts.NoPurgeWait && now.Sub(q.lastPurge) < 60*time.Second {
		q.unlock()
		return ErrPurgeQueueInProgress.New("Only one PurgeQueue operation on %s is allowed every 60 seconds.", q.name)
	}
	q.lastPurge = now
	q.resetMessages()
	var w Waiter
	if q.journaling() {
		// Kept if it cannot be stored: the messages' memory is gone.
		w = q.engine.record(Change{Purged: []string{q.name}, Queues: []QueueState{q.state()}})
	}
	q.unlock()
	return durable(w)
}

// resetMessages forgets every message and frees their memory; FIFO
// deduplication history stays, as on AWS. Callers hold mu.
func (q *Queue) resetMessages() {
	q.ready.clear()
	q.returned.clear()
	q.delayed.clear()
	q.inflight.clear()
	q.handles = nil
	q.groups, q.groupsOutSum = groupTable{}, 0
	if q.fifo != nil {
		q.fifo.ready, q.fifo.visible = nil, 0
		q.fifo.attempts = map[string]*attempt{}
	}
	q.msgs.release()
}

// Tags returns a copy of the queue's tags.
func (q *Queue) Tags() map[string]string {
	q.lock()
	defer q.unlock()
	out := make(map[string]string, len(q.tags))
	for k, v := range q.tags {
		out[k] = v
	}
	return out
}

// Tag adds or replaces tags.
func (q *Queue) Tag(tags map[string]string) error {
	if len(tags) == 0 {
		return missing("Tags")
	}
	if err := checkTags(tags); err != nil {
		return err
	}
	return q.update(func() (bool, error) {
		n := len(q.tags)
		for k := range tags {
			if _, ok := q.tags[k]; !ok {
				n++
			}
		}
		if n > 50 {
			return false, ErrInvalidParameterValue.New("Too many tags added for queue %s.", q.name)
		}
		if q.tags == nil {
			q.tags = make(map[string]string, len(tags))
		}
		for k, v := range tags {
			q.tags[k] = v
		}
		return false, nil
	})
}

// Untag removes tags by key; unknown keys are ignored.
func (q *Queue) Untag(keys []string) error {
	if len(keys) == 0 {
		return missing("TagKeys")
	}
	return q.update(func() (bool, error) {
		for _, k := range keys {
			delete(q.tags, k)
		}
		return false, nil
	})
}
