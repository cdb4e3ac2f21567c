package delivery

import (
	"sync"
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
	// Record is called in the order the changes happen to each job; it
	// must not block on the disk.
	Record(Change) Waiter
}

// Waiter is a recorded change on its way to durable storage.
type Waiter interface {
	// Wait returns nil once the change is durable, or why it cannot be.
	Wait() error
}

// Change is one atomic change of the dispatcher's durable state. Ended
// applies before Jobs.
type Change struct {
	Reset bool       // every job is gone (Dispatcher.Reset)
	Ended []JobState // jobs over: ID and TopicArn are set
	Jobs  []JobState // jobs admitted or rescheduled: their whole state
}

// JobState is one pending delivery: what to deliver, where, with which
// policy, and how far its attempts got.
type JobState struct {
	ID       uint64 // the dispatcher's, unique among its pending jobs
	TopicArn string
	// Message is set for a notification, Control for a confirmation message.
	Message *Message `json:",omitempty"`
	Control *Control `json:",omitempty"`
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
// worker may be changing. Its shards' locks are held while a change is
// recorded, as persist's compaction contract asks.
type journal struct {
	shards [16]journalShard
}

type journalShard struct {
	mu   sync.Mutex
	live map[uint64]JobState
}

func (js *journal) shard(id uint64) *journalShard { return &js.shards[id%uint64(len(js.shards))] }

// state is j's durable state.
func (j *job) state() JobState {
	return JobState{ID: j.jid, TopicArn: j.rec.TopicArn, Message: j.msg, Control: j.ctl,
		SubscriptionArn: j.sub.Arn, Protocol: j.sub.Protocol, Endpoint: j.sub.Endpoint, Raw: j.sub.Raw,
		DeadLetterArn: j.sub.DeadLetterArn, Policy: j.policy, Created: j.rec.Created, Attempts: j.attempts, Due: j.due}
}

// journalStart gives a job that is starting an id and records it; nil
// without a journal.
func (d *Dispatcher) journalStart(j *job) Waiter {
	if d.opts.Journal == nil {
		return nil
	}
	j.jid = d.jobIDs.Add(1)
	return d.save(j)
}

// save records j's current state. Only the goroutine working on j calls it.
func (d *Dispatcher) save(j *job) Waiter {
	if j.jid == 0 {
		return nil
	}
	st := j.state()
	sh := d.journal.shard(j.jid)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if d.stale(j) {
		// Reset bumps the generation before it takes the shards' locks:
		// a job of before it records nothing after its DeletePrefix.
		return nil
	}
	if sh.live == nil {
		sh.live = map[uint64]JobState{}
	}
	sh.live[j.jid] = st
	return d.opts.Journal.Record(Change{Jobs: []JobState{st}})
}

// ended records that j is over. Nothing waits for it (see above).
func (d *Dispatcher) ended(j *job) {
	if j.jid == 0 {
		return
	}
	sh := d.journal.shard(j.jid)
	sh.mu.Lock()
	delete(sh.live, j.jid)
	d.opts.Journal.Record(Change{Ended: []JobState{{ID: j.jid, TopicArn: j.rec.TopicArn}}})
	sh.mu.Unlock()
	j.jid = 0
}

// journalReset records that every job is gone. Callers are in Reset.
func (d *Dispatcher) journalReset() {
	if d.opts.Journal == nil {
		return
	}
	for i := range d.journal.shards {
		d.journal.shards[i].mu.Lock()
	}
	for i := range d.journal.shards {
		clear(d.journal.shards[i].live)
	}
	d.opts.Journal.Record(Change{Reset: true})
	for i := range d.journal.shards {
		d.journal.shards[i].mu.Unlock()
	}
}

// Dump hands every pending journaled delivery to emit, as one Change per
// shard of jobs: a store's compaction (persist.Snapshotter) writes them as
// its new base. Each shard is read under its lock; emit is called after
// releasing it. Jobs restored and not yet resumed are included.
func (d *Dispatcher) Dump(emit func(Change) error) error {
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
	for _, st := range jobs {
		d.jobIDs.Store(max(d.jobIDs.Load(), st.ID))
	}
	for _, st := range jobs {
		pol := st.Policy
		sub := Subscriber{Arn: st.SubscriptionArn, Protocol: st.Protocol, Endpoint: st.Endpoint, Raw: st.Raw,
			DeadLetterArn: st.DeadLetterArn, Policy: &pol}
		live := bind == nil || bind(&sub)
		ep, ok := d.endpoints[st.Protocol]
		if (st.Message == nil) == (st.Control == nil) || !ok || (!live && st.Message != nil) {
			j := &job{jid: st.ID, rec: &Record{TopicArn: st.TopicArn}}
			d.ended(j)
			continue
		}
		j := d.newJob(st.Message, st.Control, sub, ep)
		j.jid, j.attempts, j.due = st.ID, st.Attempts, st.Due
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
