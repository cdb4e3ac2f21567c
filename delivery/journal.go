package delivery

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/retrypolicy"
)

// Durability: a dispatcher with a Journal (Options.Journal) reports each
// remote delivery (HTTP/S, Lambda, SMTP; the ones that wait on an endpoint
// and may retry for hours) as a JobState: when it is admitted, each time a
// failed attempt schedules the next one, and once when it ends (delivered,
// dead-lettered or dropped). Deliveries to SQS queues are not journaled:
// they are made before Deliver returns, and the queue keeps the message.
//
// A notification is reported once for all the jobs that deliver it, as a
// MessageState the jobs name (JobState.MessageRef): with the first job
// journaled, in the same Change, and forgotten with the end of the last
// one, so that a publish to ten endpoints stores its body once, and a
// store that applies each Change whole never holds a job without its
// message.
//
// The end of a job is recorded without waiting: a lost end means one more
// delivery after a restart, which SNS's at-least-once delivery allows. A
// dead-lettered job's end is recorded after the dead-letter queue took the
// message, so that a restart cannot lose both. A retry's new schedule is not
// waited for either: lost, the attempt it follows is made again.
//
// The dispatcher knows nothing of how a Change is stored: internal/durable
// encodes Changes into a store's records and decodes them back into the
// JobStates Restore takes. Without a Journal nothing of this runs: each job
// costs a nil check.

// Journal receives a dispatcher's durable state changes.
type Journal interface {
	// Record is called in the order the changes happen to each job and
	// each message; it must not block on the disk.
	Record(Change) Waiter
}

// Waiter is a recorded change on its way to durable storage.
type Waiter interface {
	// Wait returns nil once the change is durable, or why it cannot be.
	Wait() error
}

// Change is one atomic change of the dispatcher's durable state. Ended and
// Forgotten apply before Messages and Jobs.
type Change struct {
	Reset     bool           // every job and message is gone (Dispatcher.Reset)
	Ended     []JobState     // jobs over: ID and TopicArn are set
	Forgotten []MessageState // messages no job delivers any more
	Messages  []MessageState // messages the Jobs are the first to deliver
	Jobs      []JobState     // jobs admitted or rescheduled: their whole state
}

// MessageState is a notification kept once for every pending job that
// delivers it.
type MessageState struct {
	Ref     uint64 // the dispatcher's, unique among its messages
	Message *Message
}

// JobState is one pending delivery: what to deliver, where, with which
// policy, and how far its attempts got.
type JobState struct {
	ID       uint64 // the dispatcher's, unique among its pending jobs
	TopicArn string
	// Message is set for a notification, Control for a confirmation message.
	Message *Message `json:",omitempty"`
	Control *Control `json:",omitempty"`
	// MessageRef, when not 0, is the Ref of the MessageState that holds
	// Message: a store keeps it there, once, and not in the job. Jobs that
	// Restore took without one carry their own Message and keep doing so.
	MessageRef uint64 `json:",omitempty"`
	// The subscription, as Deliver or Confirm got it.
	SubscriptionArn string
	Protocol        string
	Endpoint        string
	Raw             bool
	DeadLetterArn   string
	Policy          retrypolicy.Policy // the one in force when published
	Created         time.Time
	Attempts        int       // attempts made so far
	Due             time.Time // when the next attempt is due, on the clock
}

// journal is the last state recorded of each journaled job, so that Dump
// can hand a store's compaction the live jobs without reading jobs that a
// worker may be changing, and the messages those jobs deliver. A shard's
// lock is held while a change to its jobs or messages is recorded, as
// persist's compaction contract asks; a job's shard is locked before its
// message's.
type journal struct {
	shards   [16]journalShard
	messages [16]messageShard
	refs     atomic.Uint64 // the last message's Ref
}

type journalShard struct {
	mu   sync.Mutex
	live map[uint64]JobState
}

// messageShard holds the messages of journaled jobs, each once however
// many jobs deliver it.
type messageShard struct {
	mu   sync.Mutex
	msgs map[*Message]*journaledMessage
}

// journaledMessage is a message as its jobs share it in the journal.
type journaledMessage struct {
	ref  uint64
	msg  *Message
	jobs int // journaled jobs delivering it; guarded by its shard's lock
}

func (js *journal) shard(id uint64) *journalShard { return &js.shards[id%uint64(len(js.shards))] }

// messageShard is m's shard, by its id (FNV-1a): the jobs of one message
// all lock the same one.
func (js *journal) messageShard(m *Message) *messageShard {
	h := uint32(2166136261)
	for i := 0; i < len(m.ID); i++ {
		h = (h ^ uint32(m.ID[i])) * 16777619
	}
	return &js.messages[h%uint32(len(js.messages))]
}

// state is j's durable state.
func (j *job) state() JobState {
	st := JobState{ID: j.jid, TopicArn: j.rec.TopicArn, Message: j.msg, Control: j.ctl,
		SubscriptionArn: j.sub.Arn, Protocol: j.sub.Protocol, Endpoint: j.sub.Endpoint, Raw: j.sub.Raw,
		DeadLetterArn: j.sub.DeadLetterArn, Policy: j.policy, Created: j.rec.Created, Attempts: j.attempts, Due: j.due}
	if j.shared != nil {
		st.MessageRef = j.shared.ref
	}
	return st
}

// journalStart gives a job that is starting an id and records it, with its
// message if no other journaled job holds it; nil without a journal. The
// first job of a fan pins the message for the fan (Fan.Close unpins it):
// otherwise a first delivery that ends before the next job starts would
// delete the message and the next job write it again.
func (d *Dispatcher) journalStart(j *job, f *Fan) Waiter {
	if d.opts.Journal == nil {
		return nil
	}
	j.jid = d.jobIDs.Add(1)
	sh := d.journal.shard(j.jid)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if d.stale(j) {
		return nil // see save
	}
	var c Change
	if j.msg != nil {
		ms := d.journal.messageShard(j.msg)
		ms.mu.Lock()
		defer ms.mu.Unlock()
		if ms.msgs == nil {
			ms.msgs = map[*Message]*journaledMessage{}
		}
		jm := ms.msgs[j.msg]
		if jm == nil {
			jm = &journaledMessage{ref: d.journal.refs.Add(1), msg: j.msg}
			ms.msgs[j.msg] = jm
			c.Messages = []MessageState{{Ref: jm.ref, Message: j.msg}}
		}
		jm.jobs++
		j.shared = jm
		if f != nil && f.pinned == nil {
			jm.jobs++
			f.pinned = jm
		}
	}
	return d.recordLocked(sh, j, c)
}

// save records j's new schedule. Only the goroutine working on j calls it.
func (d *Dispatcher) save(j *job) Waiter {
	if j.jid == 0 {
		return nil
	}
	sh := d.journal.shard(j.jid)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if d.stale(j) {
		// Reset bumps the generation before it takes the shards' locks:
		// a job of before it records nothing after its DeletePrefix.
		return nil
	}
	return d.recordLocked(sh, j, Change{})
}

// recordLocked records c with j's current state; sh, j's shard, is locked.
func (d *Dispatcher) recordLocked(sh *journalShard, j *job, c Change) Waiter {
	st := j.state()
	if sh.live == nil {
		sh.live = map[uint64]JobState{}
	}
	sh.live[j.jid] = st
	c.Jobs = []JobState{st}
	return d.opts.Journal.Record(c)
}

// ended records that j is over, and forgets its message if no other
// journaled job delivers it. Nothing waits for it (see above).
func (d *Dispatcher) ended(j *job) {
	if j.jid == 0 {
		return
	}
	sh := d.journal.shard(j.jid)
	sh.mu.Lock()
	delete(sh.live, j.jid)
	c := Change{Ended: []JobState{{ID: j.jid, TopicArn: j.rec.TopicArn}}}
	if jm := j.shared; jm != nil {
		ms := d.journal.messageShard(jm.msg)
		ms.mu.Lock()
		ms.release(jm, &c)
		d.opts.Journal.Record(c)
		ms.mu.Unlock()
	} else {
		d.opts.Journal.Record(c)
	}
	sh.mu.Unlock()
	j.jid, j.shared = 0, nil
}

// unpin ends a fan's hold on its message (journalStart), forgetting it if
// no job delivers it any more.
func (d *Dispatcher) unpin(jm *journaledMessage) {
	ms := d.journal.messageShard(jm.msg)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var c Change
	if ms.release(jm, &c) {
		d.opts.Journal.Record(c)
	}
}

// release drops one hold on jm, a message of ms, whose lock is held: the
// last one adds it to c.Forgotten (unless a Reset forgot it already) and
// reports true.
func (ms *messageShard) release(jm *journaledMessage, c *Change) bool {
	jm.jobs--
	if jm.jobs > 0 || ms.msgs[jm.msg] != jm {
		return false
	}
	delete(ms.msgs, jm.msg)
	c.Forgotten = []MessageState{{Ref: jm.ref, Message: jm.msg}}
	return true
}

// journalReset records that every job is gone. Callers are in Reset.
func (d *Dispatcher) journalReset() {
	if d.opts.Journal == nil {
		return
	}
	js := &d.journal
	for i := range js.shards {
		js.shards[i].mu.Lock()
	}
	for i := range js.messages {
		js.messages[i].mu.Lock()
	}
	for i := range js.shards {
		clear(js.shards[i].live)
	}
	for i := range js.messages {
		clear(js.messages[i].msgs)
	}
	d.opts.Journal.Record(Change{Reset: true})
	for i := range js.messages {
		js.messages[i].mu.Unlock()
	}
	for i := range js.shards {
		js.shards[i].mu.Unlock()
	}
}

// Dump hands every pending journaled delivery to emit: one Change per shard
// of messages (each message once, however many jobs deliver it), then one
// per shard of jobs. A store's compaction (persist.Snapshotter) writes them
// as its new base. Each shard is read under its lock, as the jobs and
// messages in it are recorded; emit is called after releasing it. Jobs
// restored and not yet resumed are included.
func (d *Dispatcher) Dump(emit func(Change) error) error {
	for i := range d.journal.messages {
		ms := &d.journal.messages[i]
		ms.mu.Lock()
		c := Change{Messages: make([]MessageState, 0, len(ms.msgs))}
		for _, jm := range ms.msgs {
			c.Messages = append(c.Messages, MessageState{Ref: jm.ref, Message: jm.msg})
		}
		ms.mu.Unlock()
		if len(c.Messages) == 0 {
			continue
		}
		if err := emit(c); err != nil {
			return err
		}
	}
	for i := range d.journal.shards {
		sh := &d.journal.shards[i]
		sh.mu.Lock()
		c := Change{Jobs: make([]JobState, 0, len(sh.live))}
		for _, st := range sh.live {
			c.Jobs = append(c.Jobs, st)
		}
		sh.mu.Unlock()
		if len(c.Jobs) == 0 {
			continue
		}
		if err := emit(c); err != nil {
			return err
		}
	}
	return nil
}

// Restore takes the deliveries a store kept, before any is made: they wait
// for Resume, so that nothing is attempted before the server knows the
// address its links name. bind gives each one's Subscriber what only the
// live subscription has (Gone, Tally) and reports false when the
// subscription no longer exists: its notifications are then dropped (their
// end recorded), as a retry of a deleted subscription is; a confirmation
// message still goes out. Each delivery resumes with the attempts it had
// made, its next attempt at the time it was due on the clock (at once if
// that has passed); the admin records show it anew, with its attempt count
// and next attempt but not the attempts made before the restart.
func (d *Dispatcher) Restore(jobs []JobState, bind func(*Subscriber) bool) {
	// The jobs of one message share it again, as they did before.
	shared := map[uint64]*journaledMessage{}
	for _, st := range jobs {
		d.jobIDs.Store(max(d.jobIDs.Load(), st.ID))
		if st.MessageRef == 0 || st.Message == nil {
			continue
		}
		d.journal.refs.Store(max(d.journal.refs.Load(), st.MessageRef))
		jm := shared[st.MessageRef]
		if jm == nil {
			jm = &journaledMessage{ref: st.MessageRef, msg: st.Message}
			shared[st.MessageRef] = jm
			ms := d.journal.messageShard(jm.msg)
			ms.mu.Lock()
			if ms.msgs == nil {
				ms.msgs = map[*Message]*journaledMessage{}
			}
			ms.msgs[jm.msg] = jm
			ms.mu.Unlock()
		}
		jm.jobs++
	}
	for _, st := range jobs {
		jm := shared[st.MessageRef]
		if jm != nil {
			st.Message = jm.msg
		}
		pol := st.Policy
		sub := Subscriber{Arn: st.SubscriptionArn, Protocol: st.Protocol, Endpoint: st.Endpoint, Raw: st.Raw,
			DeadLetterArn: st.DeadLetterArn, Policy: &pol}
		live := bind == nil || bind(&sub)
		ep, ok := d.endpoints[st.Protocol]
		if (st.Message == nil) == (st.Control == nil) || !ok || (!live && st.Message != nil) {
			j := &job{jid: st.ID, rec: &Record{TopicArn: st.TopicArn}, shared: jm}
			d.ended(j)
			continue
		}
		j := d.newJob(st.Message, st.Control, sub, ep)
		j.jid, j.attempts, j.due, j.shared = st.ID, st.Attempts, st.Due, jm
		j.rec.Created, j.rec.AttemptCount = st.Created, st.Attempts
		if st.Attempts > 0 {
			j.rec.Status = StatusRetrying
			due := st.Due
			j.rec.NextAttempt = &due
		}
		sh := d.journal.shard(j.jid)
		sh.mu.Lock()
		if sh.live == nil {
			sh.live = map[uint64]JobState{}
		}
		sh.live[j.jid] = st
		sh.mu.Unlock()
		d.held = append(d.held, j)
	}
}

// Resume starts the deliveries Restore took: each waits for its due time
// on a clock timer, or is attempted at once if that has passed.
func (d *Dispatcher) Resume() {
	held := d.held
	d.held = nil
	for _, j := range held {
		if j.ep.remote(d) && !d.lanes.admit(j) {
			d.overflow(j)
			d.ended(j)
			continue
		}
		if j.due.After(d.clock.Now()) {
			d.park(j)
			continue
		}
		d.tracker.begin(j)
		if j.lane != nil {
			d.lanes.submit(j)
			continue
		}
		_, _ = d.run(j)
	}
}
