package delivery

import (
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/retrypolicy"
)

// job is one message's delivery to one subscription, from the first attempt
// to success, the dead-letter queue or the drop. Only one goroutine works on
// a job at a time: the publisher's, a lane worker's, or a clock timer's.
type job struct {
	msg    *Message // a notification, or
	ctl    *Control // a subscription control message
	sub    Subscriber
	ep     endpoint
	policy retrypolicy.Policy
	rec    *Record
	lane   *lane // remote jobs: their subscription's, from admission to the end

	attempts   int       // attempts made so far
	due        time.Time // when the next attempt is due, on the clock
	throttled  bool      // due is a throttle slot already reserved
	tracked    bool      // counted by the tracker (see Settle)
	epoch      uint64
	generation uint64            // the dispatcher's at the job's start (see Reset)
	jid        uint64            // its id in the journal; 0: not journaled
	shared     *journaledMessage // msg as the journal holds it for every job of it
}

func (d *Dispatcher) newJob(m *Message, c *Control, sub Subscriber, ep endpoint) *job {
	now := d.clock.Now()
	j := &job{msg: m, ctl: c, sub: sub, ep: ep, policy: sub.policy(), due: now, generation: d.generation.Load()}
	r := &Record{
		TopicArn: "", SubscriptionArn: sub.Arn, Protocol: sub.Protocol, Endpoint: sub.Endpoint,
		Status: StatusPending, Created: now, MaxAttempts: j.policy.Attempts(),
	}
	r.Attempts = r.first[:0]
	if m != nil {
		r.MessageID, r.Type, r.TopicArn, r.kept = m.ID, TypeNotification, m.TopicArn, d.kept(m)
	} else {
		r.MessageID, r.Type, r.TopicArn = c.ID, c.Type, c.TopicArn
	}
	j.rec = r
	d.records.add(r)
	return j
}

// id returns the id of the message the job delivers.
func (j *job) id() string { return j.rec.MessageID }

// start makes the first attempt: on the caller's goroutine for in-process
// endpoints, returning its failure, or on the subscription's lane, unless
// the lane is full. A job for a lane is journaled first: the Waiter of its
// record is returned (nil without a journal). A job of a fan, f, keeps its
// message in the journal until the fan closes (see journalStart).
func (d *Dispatcher) start(j *job, f *Fan) (Waiter, error) {
	if j.ep.remote(d) {
		if !d.lanes.admit(j) {
			d.overflow(j)
			return nil, nil
		}
		w := d.journalStart(j, f)
		d.tracker.begin(j)
		d.lanes.submit(j)
		return w, nil
	}
	first, _ := d.run(j)
	return nil, first
}

// overflow ends a job its subscription had no room for.
func (d *Dispatcher) overflow(j *job) {
	d.stats.overflow(j.sub)
	d.giveUp(j, "the subscription already has "+itoa(d.opts.Backlog)+" deliveries pending, its most (the endpoint is slower than the messages for it)")
}

// work runs a job taken from a lane and reports whether its last attempt
// failed.
func (d *Dispatcher) work(j *job) bool {
	if d.closed.Load() {
		d.records.end(j.rec, StatusDropped, "", "fanout closed")
		d.tracker.end(j)
		d.lanes.finish(j)
		return false
	}
	_, failed := d.run(j)
	return failed
}

// fire runs a job whose timer went off. On a manual clock it runs here,
// inside Advance, so that Advance returns only once the work that fell due
// is done and the clock reads each attempt's own time, unless its endpoint
// is slow; on other clocks remote attempts go to their lane, so no network
// call holds up the clock.
func (d *Dispatcher) fire(j *job) {
	d.scheduled.Add(-1)
	d.parked.remove(j)
	if d.closed.Load() {
		return
	}
	if d.stale(j) {
		d.lanes.finish(j)
		return
	}
	if j.msg != nil && j.sub.Gone != nil && j.sub.Gone() {
		// Retries stop with the subscription (an UnsubscribeConfirmation,
		// which has no msg, still goes out).
		d.records.end(j.rec, StatusDropped, "", "subscription deleted")
		d.stats.drop(j.sub)
		d.ended(j)
		d.lanes.finish(j)
		return
	}
	d.tracker.begin(j)
	if j.lane != nil && (!d.inlineTimers || d.lanes.slowLane(j)) {
		d.lanes.submit(j)
		return
	}
	_, _ = d.run(j)
}

// run makes attempts until the job ends or must wait for its next one,
// and returns the failure of the first attempt it made, and whether the
// last one failed.
func (d *Dispatcher) run(j *job) (first error, failed bool) {
	made := false
	for {
		if d.stale(j) { // reset: attempt, record and schedule nothing more
			d.tracker.end(j)
			d.lanes.finish(j)
			return first, false
		}
		now := d.clock.Now()
		if j.due.After(now) {
			// The timer is set before the job stops counting, so that a
			// Settle returning now cannot let the clock move past a retry
			// not yet scheduled. Once parked, the job belongs to its timer:
			// touch it no more.
			epoch, tracked := j.epoch, j.tracked
			j.tracked = false
			d.park(j)
			d.tracker.release(epoch, tracked)
			return first, failed
		}
		if !j.throttled {
			if slot, wait := d.throttle.reserve(j); wait {
				j.due, j.throttled = slot, true
				d.records.reschedule(j.rec, slot)
				continue
			}
		}
		j.throttled = false
		res, end := d.attempt(j)
		failed = res.err != nil
		if d.stale(j) {
			d.tracker.end(j)
			d.lanes.finish(j)
			return first, failed
		}
		if !made {
			made = true
			if res.err != nil {
				first = &Failure{Client: res.client, Reason: res.err.Error(), Status: res.status}
			}
		}
		if !d.next(j, res, end) {
			d.ended(j) // after a dead-letter queue took it
			d.tracker.end(j)
			d.lanes.finish(j)
			return first, failed
		}
		d.save(j)
	}
}

// park waits for the job's next attempt on a clock timer.
func (d *Dispatcher) park(j *job) {
	d.scheduled.Add(1)
	d.parked.add(j, func() clock.Timer {
		return d.clock.AfterFunc(j.due.Sub(d.clock.Now()), func() { d.fire(j) })
	})
}

// attempt makes one attempt and returns its result and the moment, on the
// clock, it ended. An attempt starts at its due time even when the clock has
// been moved past it; it lasts as long as it took, measured on the clock
// but never longer than on the wall (a clock moved during the attempt does
// not stretch it). On a manual clock only Advance moves time, so an attempt
// takes none.
func (d *Dispatcher) attempt(j *job) (result, time.Time) {
	if !j.ep.remote(d) {
		// In-process (a queue, the outbox): no network to wait for, so
		// the attempt takes no time and its clock reads are saved.
		res := j.ep.attempt(d, j)
		j.attempts++
		return res, j.due
	}
	wall, start := time.Now(), d.clock.Now()
	res := j.ep.attempt(d, j)
	took := min(d.clock.Now().Sub(start), time.Since(wall))
	if took < 0 || d.inlineTimers {
		took = 0
	}
	j.attempts++
	return res, j.due.Add(took)
}

// next records an attempt and decides what follows: true when the job has
// another attempt due (j.due is set), false when it is over.
func (d *Dispatcher) next(j *job, res result, end time.Time) bool {
	a := Attempt{Number: j.attempts, Time: j.due, HTTPStatus: res.status}
	if res.err == nil {
		a.Outcome = OutcomeDelivered
		d.records.attempt(j.rec, a, StatusDelivered)
		d.stats.deliver(j.sub)
		return false
	}
	a.Error = res.err.Error()
	d.stats.fail(j.due, j.id(), j.rec.TopicArn, j.sub, res)
	d.opts.Logger.Warn("sns delivery attempt failed", "subscription", j.sub.Arn, "endpoint", j.sub.Endpoint,
		"message_id", j.id(), "attempt", j.attempts, "client_error", res.client, "error", res.err)
	if res.client {
		a.Outcome = OutcomeRejected
		d.records.attempt(j.rec, a, StatusRetrying)
		d.giveUp(j, "client-side error: "+a.Error)
		return false
	}
	a.Outcome = OutcomeFailed
	delay, more := j.policy.Delay(j.attempts)
	if !more {
		d.records.attempt(j.rec, a, StatusRetrying)
		d.giveUp(j, "delivery policy exhausted after "+itoa(j.attempts)+" attempts: "+a.Error)
		return false
	}
	at := end.Add(delay)
	a.NextAttempt = &at
	d.records.attempt(j.rec, a, StatusRetrying)
	j.due = at
	return true
}

// giveUp ends a job that was not delivered: to the dead-letter queue, or
// dropped. Control messages are never dead-lettered.
func (d *Dispatcher) giveUp(j *job, reason string) {
	if j.msg == nil || j.sub.DeadLetterArn == "" {
		d.records.end(j.rec, StatusDropped, "", reason)
		d.stats.drop(j.sub)
		d.opts.Logger.Warn("sns delivery dropped", "subscription", j.sub.Arn, "message_id", j.id(), "reason", reason)
		return
	}
	if err := d.deadLetter(j); err != nil {
		reason += "; dead-letter queue " + j.sub.DeadLetterArn + " refused it: " + err.Error()
		d.records.end(j.rec, StatusDropped, "", reason)
		d.stats.drop(j.sub)
		d.opts.Logger.Warn("sns dead-letter failed", "subscription", j.sub.Arn, "message_id", j.id(), "dlq", j.sub.DeadLetterArn, "error", err)
		return
	}
	d.records.end(j.rec, StatusDeadLettered, j.sub.DeadLetterArn, reason)
	d.stats.deadLetter(j.sub)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
