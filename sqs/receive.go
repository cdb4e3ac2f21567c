package sqs

import (
	"bytes"
	"context"
	"strconv"
	"time"
	"unsafe"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/clock"
)

// System attribute names a receive may ask for.
const (
	SysSenderID                         = "SenderId"
	SysSentTimestamp                    = "SentTimestamp"
	SysApproximateReceiveCount          = "ApproximateReceiveCount"
	SysApproximateFirstReceiveTimestamp = "ApproximateFirstReceiveTimestamp"
	SysSequenceNumber                   = "SequenceNumber"
	SysMessageDeduplicationID           = "MessageDeduplicationId"
	SysMessageGroupID                   = "MessageGroupId"
	SysAWSTraceHeader                   = "AWSTraceHeader"
	SysDeadLetterQueueSourceArn         = "DeadLetterQueueSourceArn"
)

var systemAttributeOrder = []string{
	SysSenderID, SysSentTimestamp, SysApproximateReceiveCount, SysApproximateFirstReceiveTimestamp,
	SysSequenceNumber, SysMessageDeduplicationID, SysMessageGroupID, SysAWSTraceHeader,
	SysDeadLetterQueueSourceArn,
}

// inflightLimit is the most messages a standard queue holds in flight.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
const inflightLimit = 120000

// ReceiveInput is a ReceiveMessage request.
type ReceiveInput struct {
	MaxNumberOfMessages *int
	VisibilityTimeout   *int
	WaitTimeSeconds     *int
	// SystemAttributeNames is the union of AttributeNames and
	// MessageSystemAttributeNames.
	SystemAttributeNames  []string
	MessageAttributeNames []string
	AttemptID             string
}

// Received is one message as ReceiveMessage returns it.
type Received struct {
	MessageID         string
	ReceiptHandle     string
	MD5OfBody         string
	Body              string
	Attributes        []Attribute // system attributes, in AWS's order
	MD5OfAttrs        string
	MessageAttributes []MessageAttribute
}

type receiveReq struct {
	max        int
	visibility int
	sys        map[string]bool
	sysAll     bool
	attrNames  []string
	attemptID  string // FIFO only: ReceiveRequestAttemptId
}

// Receive returns up to MaxNumberOfMessages visible messages, waiting up to
// WaitTimeSeconds (default: the queue's ReceiveMessageWaitTimeSeconds) for
// the first to arrive.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
func (q *Queue) Receive(ctx context.Context, in ReceiveInput) ([]Received, error) {
	cfg := q.cfg()
	req := receiveReq{max: 1, visibility: cfg.visibilityTimeout, attrNames: in.MessageAttributeNames}
	if in.MaxNumberOfMessages != nil {
		req.max = *in.MaxNumberOfMessages
		if req.max < 1 || req.max > 10 {
			return nil, invalidValue(strconv.Itoa(req.max), "MaxNumberOfMessages", "Must be between 1 and 10, if provided.")
		}
	}
	if in.VisibilityTimeout != nil {
		req.visibility = *in.VisibilityTimeout
		if req.visibility < 0 || req.visibility > 43200 {
			return nil, invalidValue(strconv.Itoa(req.visibility), "VisibilityTimeout", "Must be >= 0 and <= 43200, if provided.")
		}
	}
	wait := cfg.receiveWait
	if in.WaitTimeSeconds != nil {
		wait = *in.WaitTimeSeconds
		if wait < 0 || wait > 20 {
			return nil, invalidValue(strconv.Itoa(wait), "WaitTimeSeconds", "Must be >= 0 and <= 20, if provided.")
		}
	}
	if in.AttemptID != "" && !validMessageID(in.AttemptID) {
		return nil, invalidValue(in.AttemptID, "ReceiveRequestAttemptId", "ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.")
	}
	if cfg.fifo {
		req.attemptID = in.AttemptID // ignored on standard queues, as on AWS
	}
	for _, n := range in.SystemAttributeNames {
		switch n {
		case "All":
			req.sysAll = true
		case SysSenderID, SysSentTimestamp, SysApproximateReceiveCount, SysApproximateFirstReceiveTimestamp,
			SysSequenceNumber, SysMessageDeduplicationID, SysMessageGroupID, SysAWSTraceHeader, SysDeadLetterQueueSourceArn:
			if req.sys == nil {
				req.sys = map[string]bool{}
			}
			req.sys[n] = true
		default:
			return nil, ErrInvalidAttributeName.New("Unknown Attribute %s.", n)
		}
	}

	clk := q.engine.clock
	deadline := clk.Now().Add(time.Duration(wait) * time.Second)
	var w *waiter               // made at the first wait
	var expired <-chan struct{} // the poll's own deadline, armed once
	var gone <-chan struct{}    // closed when the queue is deleted
	for {
		q.lock()
		woken := w != nil && q.resume(w)
		if q.deleted {
			q.unlock()
			return nil, nil
		}
		now := clk.Now()
		if req.attemptID != "" {
			if out, ok := q.replay(req.attemptID, now); ok {
				if woken {
					q.wake() // it takes nothing: the wake goes on
				}
				var stored Waiter
				if q.journaling() {
					stored = q.recordReplay(req.attemptID)
				}
				q.unlock()
				if err := durable(stored); err != nil {
					return nil, err
				}
				return out, nil
			}
		}
		out, moves, err := q.take(req, now, wait > 0)
		if len(out) > 0 {
			q.taken()
		}
		var stored Waiter
		if q.journaling() {
			stored = q.recordReceive(req.attemptID) // one batch for every message taken
		}
		remaining := deadline.Sub(now)
		sleep := err == nil && len(out) == 0 && remaining > 0 && !closed(expired)
		if sleep {
			if w == nil {
				w = &waiter{ch: make(chan struct{}, 1)}
				var stop func()
				expired, stop = clock.Wait(clk, remaining)
				defer stop()
				gone = q.goneChan()
			}
			q.wait(w, now)
		}
		q.unlock()
		moved := q.engine.deadLetter(q, moves)
		if err != nil {
			return nil, err
		}
		if err := waitAll(stored, moved); err != nil {
			return nil, err
		}
		if !sleep {
			return out, nil
		}
		if !q.engine.waitForWork(ctx, w.ch, expired, gone) {
			q.lock()
			q.leave(w)
			q.unlock()
			return nil, nil
		}
	}
}

// closed reports whether ch (nil: never) is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// take hands out up to req.max visible messages. Messages past their
// maxReceiveCount are returned as moves for the caller to dead-letter after
// releasing the lock. Callers hold mu.
func (q *Queue) take(req receiveReq, now time.Time, longPoll bool) ([]Received, []draft, *awserr.Error) {
	q.promote(now)
	if q.fifo != nil {
		out, moves := q.takeFifo(req, now)
		return out, moves, nil
	}
	if q.inflight.len() >= inflightLimit {
		if longPoll {
			return nil, nil, nil
		}
		// The wording and the 403 of the Query protocol are AWS's, as
		// recorded in a client's bug report; long polls return empty instead.
		e := ErrOverLimit.New("Too many messages have been received without being deleted.\nPlease delete your received messages or let them timeout before receiving more.")
		e.QueryStatus = 403
		return nil, nil, e
	}
	var lentBuf [10]uint32 // req.max is at most 10
	lent := lentBuf[:0]
	var moves []draft
	var deferred []uint32
	for len(lent) < req.max && q.inflight.len() < inflightLimit {
		i := q.popVisible()
		if i == none {
			break
		}
		if !q.screen(i, now, &moves) {
			continue
		}
		if g := q.groups.of(q.rec(i)); g != nil && len(deferred) < maxDeferred && q.noisy(g) {
			deferred = append(deferred, i) // fair queues: other tenants first
			continue
		}
		q.deliver(i, req, now)
		lent = append(lent, i)
	}
	// Noisy groups still get messages when nothing else is waiting.
	for _, i := range deferred {
		if len(lent) < req.max && q.inflight.len() < inflightLimit {
			q.deliver(i, req, now)
			lent = append(lent, i)
		} else {
			q.rec(i).state = stateReturned
			q.returned.push(i)
		}
	}
	out := make([]Received, len(lent), req.max)
	q.renderAll(out, lent, req)
	return out, moves, nil
}

// maxDeferred bounds how far one receive looks past a noisy group's messages.
const maxDeferred = 100

// noisy reports whether a fair-queue message group holds a disproportionate
// share of the in-flight messages: at least 10, more than twice as many as all
// other groups together, while another group has messages in the queue.
func (q *Queue) noisy(g *group) bool {
	n := g.inflight
	return n >= 10 && n > 2*(q.groupsOutSum-n) && len(q.groups.byID) > 1
}

// NoisyGroups counts the fair-queue message groups noisy now.
func (q *Queue) NoisyGroups() int {
	q.lock()
	defer q.unlock()
	q.promote(q.engine.clock.Now())
	n := 0
	if q.fifo != nil {
		return 0
	}
	for _, g := range q.groups.byID {
		if q.noisy(g) {
			n++
		}
	}
	return n
}

// screen checks a message taken for delivery: one past its retention is
// dropped, one past its maxReceiveCount is dropped and added to moves for the
// dead-letter queue. It reports whether it may be delivered. Callers hold mu.
func (q *Queue) screen(i uint32, now time.Time, moves *[]draft) bool {
	r := q.rec(i)
	if q.retentionExpired(r, now) {
		q.drop(i)
		return false
	}
	if q.overReceived(r) {
		*moves = append(*moves, q.materialize(i))
		q.drop(i)
		return false
	}
	return true
}

// overReceived reports whether r has been received maxReceiveCount times
// from this queue and must go to the dead-letter queue instead of being
// received again. AWS counts "the number of times a consumer can receive a
// message from a source queue before it is moved to a dead-letter queue"
// (the developer guide), so receives in an earlier queue do not count: a
// dead-lettered message is received from its DLQ before that DLQ's own
// RedrivePolicy moves it on, and a queue that is its own DLQ, or a redrive
// cycle, hands it out again instead of moving it on every receive.
func (q *Queue) overReceived(r *record) bool {
	rp := q.config.redrive
	return rp != nil && int(r.receiveCount-r.receivesBefore) >= rp.MaxReceiveCount
}

// takeFifo hands out messages group by group: from each unlocked group as
// many as fit, in order, which locks the group until none is in flight.
func (q *Queue) takeFifo(req receiveReq, now time.Time) ([]Received, []draft) {
	f := q.fifo
	var out []Received
	var moves []draft
	var taken []uint32
	for len(taken) < req.max && q.inflight.len() < fifoInflightLimit {
		g := f.nextGroup()
		if g == nil {
			break
		}
		for len(taken) < req.max && g.msgs.len() > 0 && q.inflight.len() < fifoInflightLimit {
			i := g.msgs.pop()
			f.visible--
			if !q.screen(i, now, &moves) {
				continue
			}
			q.deliver(i, req, now)
			taken = append(taken, i)
		}
		f.markReady(g) // only if nothing of it went out
		if g.size == 0 && !g.queued {
			q.groups.remove(g)
		}
	}
	if len(taken) > 0 {
		out = make([]Received, len(taken))
		q.renderAll(out, taken, req)
	}
	if req.attemptID != "" && len(out) > 0 {
		q.record(req, now, taken, out)
	}
	return out, moves
}

// deliver puts record i in flight for this receive; renderAll renders it
// once every message of the receive is taken. Callers hold mu.
func (q *Queue) deliver(i uint32, req receiveReq, now time.Time) {
	r := q.rec(i)
	r.receiveCount++
	if r.receiveCount == 1 {
		r.firstReceiveAt = now.UnixMilli()
		q.handle(r.seq, i)
	}
	r.receivedAt = now.UnixNano()
	r.visibleAt = now.Add(time.Duration(req.visibility) * time.Second).UnixNano()
	q.enterInflight(i)
	if q.journaling() {
		q.took = append(q.took, i)
	}
}

// renderAll renders the records list into out (as long), the messages'
// bytes and receipt handles in one allocation for all. Callers hold mu.
func (q *Queue) renderAll(out []Received, list []uint32, req receiveReq) {
	n := 0
	for _, i := range list {
		n += renderedLen(q.rec(i))
	}
	buf := make([]byte, n)
	for k, i := range list {
		m := renderedLen(q.rec(i))
		out[k] = q.renderInto(buf[:m:m], i, req)
		buf = buf[m:]
	}
}

// renderedLen is how many bytes render copies of r: its id, MD5 and body,
// and its receipt handle.
func renderedLen(r *record) int { return hexIDs + int(r.bodyLen) + handleText }

// render builds the reply for one received message: copies, in one
// allocation with its receipt handle, never views of the queue's memory.
// Callers hold mu.
func (q *Queue) render(i uint32, req receiveReq) Received {
	return q.renderInto(make([]byte, renderedLen(q.rec(i))), i, req)
}

// renderInto is render into buf, renderedLen bytes never written again.
func (q *Queue) renderInto(buf []byte, i uint32, req receiveReq) Received {
	r := q.rec(i)
	idsText(buf, q.msgs.ids(r))
	end := hexIDs + copy(buf[hexIDs:], q.msgs.body(r))
	putHandle(buf[end:], q.uid, r.seq, r.gen())
	all := unsafe.String(&buf[0], len(buf)) // buf is never written again
	out := Received{
		MessageID:     all[:36],
		MD5OfBody:     all[36:hexIDs],
		Body:          all[hexIDs:end],
		ReceiptHandle: all[end:],
	}
	if len(req.attrNames) > 0 && r.attrLen > 0 {
		list, md5 := decodeAttrs(q.msgs.attrBytes(r))
		if sel := selectAttributes(list, req.attrNames); len(sel) > 0 {
			out.MessageAttributes = sel
			if len(sel) == len(list) {
				out.MD5OfAttrs = md5
			} else {
				out.MD5OfAttrs = MD5OfAttributes(sel)
			}
		}
	}
	if !req.sysAll && len(req.sys) == 0 {
		return out
	}
	ext, sender := q.msgs.ext(r)
	if g := q.groups.of(r); g != nil {
		ext.groupID = g.id
	}
	for _, n := range systemAttributeOrder {
		if !req.sysAll && !req.sys[n] {
			continue
		}
		var v string
		switch n {
		case SysSenderID:
			v = sender
		case SysSentTimestamp:
			v = strconv.FormatInt(r.sentAt/int64(time.Millisecond), 10)
		case SysApproximateReceiveCount:
			v = strconv.Itoa(int(r.receiveCount))
		case SysApproximateFirstReceiveTimestamp:
			v = strconv.FormatInt(r.firstReceiveAt, 10)
		case SysSequenceNumber:
			v = ext.sequenceNum
		case SysMessageDeduplicationID:
			v = ext.dedupID
		case SysMessageGroupID:
			v = ext.groupID
		case SysAWSTraceHeader:
			v = ext.traceHeader
		case SysDeadLetterQueueSourceArn:
			v = ext.dlqSource
		}
		if v != "" {
			out.Attributes = append(out.Attributes, Attribute{n, v})
		}
	}
	return out
}

// materialize copies record i out of the queue, for a move to another.
// Callers hold mu.
func (q *Queue) materialize(i uint32) draft {
	r := q.rec(i)
	body := q.msgs.body(r)
	d := draft{
		ids: [bodyAt]byte(q.msgs.ids(r)), body: string(body),
		sentAt: r.sentAt, firstReceiveAt: r.firstReceiveAt,
		receiveCount: r.receiveCount, receivesBefore: r.receivesBefore,
		srcSeq: r.seq,
	}
	if r.attrLen > 0 {
		d.attrs = bytes.Clone(q.msgs.attrBytes(r))
	}
	d.ext, d.sender = q.msgs.ext(r)
	if g := q.groups.of(r); g != nil {
		d.ext.groupID = g.id
	}
	return d
}

// deadLetter moves messages from src to its dead-letter queue. It runs
// without src's lock held and takes one queue lock, the target's, which may
// be src again (a queue that is its own DLQ). A message whose DLQ has gone
// stays in src.
//
// With a journal, the messages' removal from src and their arrival in the
// target are one Change, recorded under the target's lock, so that no crash
// between the two loses a message (persist: one batch is all or nothing).
// That the removal is recorded under another lock than src's is sound
// against the store's snapshot rule (persist: a snapshot reads each key
// under the lock its Enqueue is called under): the records were taken out
// of src in memory, under src's lock, before this Change was enqueued, and
// src never holds them (their seq) again. So a snapshot that read src
// before the removal began before this Change was enqueued and replays it,
// and one that read src after the removal does not hold them.
func (e *Engine) deadLetter(src *Queue, moves []draft) Waiter {
	if len(moves) == 0 {
		return nil
	}
	cfg := src.cfg()
	var dlq *Queue
	if cfg.redrive != nil {
		dlq = e.queueByArn(cfg.redrive.DeadLetterTargetArn)
	}
	target, source := dlq, src.arn
	if dlq == nil {
		target, source = src, ""
	}
	now := e.clock.Now()
	target.lock()
	defer target.unlock()
	var ch *Change
	if target.journaling() {
		ch = &Change{Removed: make([]MessageRef, len(moves))}
		for k, m := range moves {
			ch.Removed[k] = MessageRef{src.name, m.srcSeq}
		}
	}
	if target.deleted {
		if ch != nil {
			return e.record(*ch) // memory lost them with the target
		}
		return nil
	}
	if target != src {
		src.deadLettered.Add(int64(len(moves)))
	}
	for _, m := range moves {
		c := m
		c.receivesBefore = m.receiveCount
		if source != "" {
			c.ext.dlqSource = source
		}
		if target.config.fifo && source != "" {
			c.sentAt = now.UnixNano() // FIFO DLQs restart retention; standard ones keep it
			// "the original message's deduplication ID will be replaced with
			// the original message's ID" (the developer guide, DLQ redrive),
			// so two messages that shared a deduplication ID both stay.
			c.ext.dedupID = m.id()
		}
		zero := 0
		i := target.enqueue(&c, &zero, now)
		// It has been received, so later receives find it by its handles
		// (deliver records only a first receive).
		target.handle(target.rec(i).seq, i)
		if ch != nil {
			ch.Messages = append(ch.Messages, target.messageView(i, nil))
		}
	}
	if ch == nil {
		return nil
	}
	target.withCeiling(ch)
	return e.record(*ch)
}

// Delete deletes the message a receipt handle names. A handle of an earlier
// receive, or of a message already deleted, succeeds and changes nothing, as
// AWS documents for standard queues.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html
func (q *Queue) Delete(handle string) error {
	seq, gen, err := q.checkHandle(handle)
	if err != nil {
		return err
	}
	q.lock()
	before := q.inflight.len()
	gone, err := q.delete(handle, seq, gen)
	q.roomFreed(before)
	if err != nil || !q.journaling() || gone.Queue == "" {
		q.unlock()
		return err
	}
	w := q.engine.record(Change{Removed: []MessageRef{gone}})
	q.unlock()
	return durable(w)
}

// DeleteBatch deletes the messages of several receipt handles, with one
// record for all of them: errs[k] is handle k's outcome, err a failure of
// the whole call (the record could not be stored).
func (q *Queue) DeleteBatch(handles []string) (errs []error, err error) {
	errs = make([]error, len(handles))
	// A batch holds at most 10: the decoded handles stay on the stack.
	var seqBuf [10]uint64
	var genBuf [10]uint32
	seqs, gens := seqBuf[:0], genBuf[:0]
	for k, h := range handles {
		seq, gen, err := q.checkHandle(h)
		seqs, gens, errs[k] = append(seqs, seq), append(gens, gen), err
	}
	q.lock()
	before := q.inflight.len()
	var c Change
	journaling := q.journaling()
	for k, h := range handles {
		if errs[k] == nil {
			var gone MessageRef
			if gone, errs[k] = q.delete(h, seqs[k], gens[k]); errs[k] == nil && gone.Queue != "" && journaling {
				c.Removed = append(c.Removed, gone) // only a journal reads them
			}
		}
	}
	q.roomFreed(before)
	if !journaling || len(c.Removed) == 0 {
		q.unlock()
		return errs, nil
	}
	w := q.engine.record(c)
	q.unlock()
	return errs, durable(w)
}

// checkHandle validates a receipt handle of this queue and returns its
// message's seq and receive generation.
func (q *Queue) checkHandle(handle string) (uint64, uint32, error) {
	if handle == "" {
		return 0, 0, missing("ReceiptHandle")
	}
	uid, seq, gen, ok := decodeHandle(handle)
	if !ok || uid != q.uid {
		return 0, 0, ErrReceiptHandleIsInvalid.New("The input receipt handle \"%s\" is not a valid receipt handle.", handle)
	}
	return seq, gen, nil
}

// delete deletes the message of a checked handle and returns what to
// record: the message it names, also when it was gone already, so that the
// 200 of a retried delete waits for the deletion being stored; nothing (a
// zero ref) for the handle of an earlier receive of a message still there.
// Callers hold mu.
func (q *Queue) delete(handle string, seq uint64, gen uint32) (MessageRef, error) {
	i, found := q.handles[seq]
	if q.fifo != nil {
		q.promote(q.engine.clock.Now())
		// promote may have dropped it: its slot is then free (stateGone)
		if found && (q.rec(i).gen() != gen || q.rec(i).state != stateInflight) {
			return MessageRef{}, invalidValue(handle, "ReceiptHandle", "The receipt handle has expired.")
		}
	}
	if !found {
		return MessageRef{q.name, seq}, nil
	}
	if q.rec(i).gen() != gen {
		return MessageRef{}, nil // a later receive's: nothing changes, and the message stays stored
	}
	g := q.groups.of(q.rec(i))
	q.unlink(i)
	q.drop(i)
	if q.fifo != nil {
		q.fifo.markReady(g)
		q.wake()
	}
	return MessageRef{q.name, seq}, nil
}

// unlink takes record i out of whichever container holds it. Callers hold mu.
func (q *Queue) unlink(i uint32) {
	r := q.rec(i)
	switch r.state {
	case stateInflight:
		q.inflight.remove(i)
		q.leaveInflight(i)
	case stateReturned:
		if q.fifo != nil {
			q.groups.of(r).msgs.remove(i)
			q.fifo.visible--
		} else {
			q.returned.remove(i)
		}
	case stateDelayed:
		q.delayed.remove(i)
	}
}

// ChangeVisibility sets a received message's visibility timeout, counted
// from now. The total since the receive may not pass 12 hours.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
func (q *Queue) ChangeVisibility(handle string, timeout int) error {
	seq, gen, err := q.checkVisibility(handle, timeout)
	if err != nil {
		return err
	}
	q.lock()
	i, err := q.changeVisibility(handle, seq, gen, timeout)
	if err != nil || !q.journaling() {
		q.unlock()
		return err
	}
	w := q.engine.record(Change{Statuses: []MessageStatus{q.status(i)}})
	q.unlock()
	return durable(w)
}

// VisibilityChange is one entry of ChangeVisibilityBatch.
type VisibilityChange struct {
	Handle  string
	Timeout int
}

// ChangeVisibilityBatch changes the visibility of several messages, with
// one record for all of them: errs[k] is entry k's outcome, err a failure
// of the whole call (the record could not be stored).
func (q *Queue) ChangeVisibilityBatch(entries []VisibilityChange) (errs []error, err error) {
	errs = make([]error, len(entries))
	seqs := make([]uint64, len(entries))
	gens := make([]uint32, len(entries))
	for k, e := range entries {
		seqs[k], gens[k], errs[k] = q.checkVisibility(e.Handle, e.Timeout)
	}
	q.lock()
	var c Change
	for k, e := range entries {
		if errs[k] == nil {
			var i uint32
			if i, errs[k] = q.changeVisibility(e.Handle, seqs[k], gens[k], e.Timeout); errs[k] == nil && q.journaling() {
				c.Statuses = append(c.Statuses, q.status(i))
			}
		}
	}
	if len(c.Statuses) == 0 {
		q.unlock()
		return errs, nil
	}
	w := q.engine.record(c)
	q.unlock()
	return errs, durable(w)
}

func (q *Queue) checkVisibility(handle string, timeout int) (uint64, uint32, error) {
	if handle == "" {
		return 0, 0, missing("ReceiptHandle")
	}
	if timeout < 0 || timeout > 43200 {
		return 0, 0, invalidValue(strconv.Itoa(timeout), "VisibilityTimeout", "VisibilityTimeout must be an integer between 0 and 43200")
	}
	return q.checkHandle(handle)
}

// changeVisibility applies a checked change and returns its record.
// Callers hold mu.
func (q *Queue) changeVisibility(handle string, seq uint64, gen uint32, timeout int) (uint32, error) {
	now := q.engine.clock.Now()
	q.promote(now)
	i, found := q.handles[seq]
	if !found || q.rec(i).gen() != gen || (q.fifo != nil && q.rec(i).state != stateInflight) {
		return 0, invalidValue(handle, "ReceiptHandle", "Message does not exist or is not available for visibility timeout change.")
	}
	if now.Add(time.Duration(timeout)*time.Second).Sub(time.Unix(0, q.rec(i).receivedAt)) > 12*time.Hour {
		return 0, invalidValue(strconv.Itoa(timeout), "VisibilityTimeout", "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]")
	}
	q.unlink(i)
	q.rec(i).visibleAt = now.Add(time.Duration(timeout) * time.Second).UnixNano()
	if timeout == 0 {
		q.makeVisible(i)
		return i, nil
	}
	q.enterInflight(i)
	return i, nil
}
