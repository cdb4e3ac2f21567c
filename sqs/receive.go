package sqs

import (
	"context"
	"strconv"
	"time"

	"github.com/fanout/fanout/awserr"
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
	for {
		q.lock()
		if q.deleted {
			q.unlock()
			return nil, nil
		}
		now := clk.Now()
		if req.attemptID != "" {
			if out, ok := q.fifo.replay(req.attemptID, now); ok {
				q.unlock()
				return out, nil
			}
		}
		out, moves, err := q.take(req, now, wait > 0)
		if q.notify == nil {
			q.notify = make(chan struct{})
		}
		notify := q.notify
		next, hasNext := q.nextDue(now)
		q.unlock()
		q.engine.deadLetter(q, moves)
		if err != nil {
			return nil, err
		}
		remaining := deadline.Sub(now)
		if len(out) > 0 || remaining <= 0 {
			return out, nil
		}
		if hasNext && next < remaining {
			remaining = next
		}
		if !q.engine.waitForWork(ctx, notify, q.gone, remaining) {
			return nil, nil
		}
	}
}

// take hands out up to req.max visible messages. Messages past their
// maxReceiveCount are returned as moves for the caller to dead-letter after
// releasing the lock. Callers hold mu.
func (q *Queue) take(req receiveReq, now time.Time, longPoll bool) ([]Received, []*message, *awserr.Error) {
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
	out := make([]Received, 0, req.max)
	var moves, deferred []*message
	for len(out) < req.max && q.inflight.len() < inflightLimit {
		m := q.popVisible()
		if m == nil {
			break
		}
		if !q.screen(m, now, &moves) {
			continue
		}
		if g := m.groupID(); g != "" && len(deferred) < maxDeferred && q.noisy(g) {
			deferred = append(deferred, m) // fair queues: other tenants first
			continue
		}
		out = append(out, q.deliver(m, req, now))
	}
	// Noisy groups still get messages when nothing else is waiting.
	for _, m := range deferred {
		if len(out) < req.max && q.inflight.len() < inflightLimit {
			out = append(out, q.deliver(m, req, now))
		} else {
			m.state = stateReturned
			q.returned.push(m)
		}
	}
	return out, moves, nil
}

// maxDeferred bounds how far one receive looks past a noisy group's messages.
const maxDeferred = 100

// noisy reports whether a fair-queue message group holds a disproportionate
// share of the in-flight messages: at least 10, more than twice as many as all
// other groups together, while another group has messages in the queue.
func (q *Queue) noisy(groupID string) bool {
	n := q.groupsOut[groupID]
	return n >= 10 && n > 2*(q.groupsOutSum-n) && len(q.groupsHeld) > 1
}

// NoisyGroups counts the fair-queue message groups noisy now.
func (q *Queue) NoisyGroups() int {
	q.lock()
	defer q.unlock()
	q.promote(q.engine.clock.Now())
	n := 0
	for g := range q.groupsOut {
		if q.noisy(g) {
			n++
		}
	}
	return n
}

// screen checks a message taken for delivery: one past its retention is
// dropped, one past its maxReceiveCount is dropped and added to moves for the
// dead-letter queue. It reports whether m may be delivered. Callers hold mu.
func (q *Queue) screen(m *message, now time.Time, moves *[]*message) bool {
	if q.retentionExpired(m, now) {
		q.drop(m)
		return false
	}
	if q.overReceived(m) {
		q.drop(m)
		*moves = append(*moves, m)
		return false
	}
	return true
}

// overReceived reports whether m has been received maxReceiveCount times
// from this queue and must go to the dead-letter queue instead of being
// received again. AWS counts "the number of times a consumer can receive a
// message from a source queue before it is moved to a dead-letter queue"
// (the developer guide), so receives in an earlier queue do not count: a
// dead-lettered message is received from its DLQ before that DLQ's own
// RedrivePolicy moves it on, and a queue that is its own DLQ, or a redrive
// cycle, hands it out again instead of moving it on every receive.
func (q *Queue) overReceived(m *message) bool {
	rp := q.config.redrive
	return rp != nil && int(m.receiveCount-m.receivesBefore) >= rp.MaxReceiveCount
}

// takeFifo hands out messages group by group: from each unlocked group as
// many as fit, in order, which locks the group until none is in flight.
func (q *Queue) takeFifo(req receiveReq, now time.Time) ([]Received, []*message) {
	f := q.fifo
	var out []Received
	var moves, taken []*message
	for len(out) < req.max && q.inflight.len() < fifoInflightLimit {
		g := f.nextGroup()
		if g == nil {
			break
		}
		for len(out) < req.max && g.msgs.len() > 0 && q.inflight.len() < fifoInflightLimit {
			m := g.msgs.pop()
			f.visible--
			if !q.screen(m, now, &moves) {
				continue
			}
			out = append(out, q.deliver(m, req, now))
			taken = append(taken, m)
		}
		f.markReady(g) // only if nothing of it went out
		if g.size == 0 && !g.queued {
			delete(f.groups, g.id)
		}
	}
	if req.attemptID != "" && len(out) > 0 {
		f.record(req.attemptID, now, taken, out)
	}
	return out, moves
}

// deliver puts m in flight for this receive and renders it. Callers hold mu.
func (q *Queue) deliver(m *message, req receiveReq, now time.Time) Received {
	m.receiveCount++
	if m.receiveCount == 1 {
		m.firstReceiveAt = now.UnixMilli()
		q.handles[m.seq] = m
	}
	m.handleGen++
	m.receivedAt = now.UnixNano()
	m.visibleAt = now.Add(time.Duration(req.visibility) * time.Second).UnixNano()
	q.enterInflight(m)
	return q.render(m, req)
}

// render builds the reply for one received message. Callers hold mu.
func (q *Queue) render(m *message, req receiveReq) Received {
	r := Received{
		MessageID:     m.id(),
		ReceiptHandle: encodeHandle(q.uid, m.seq, m.handleGen),
		MD5OfBody:     m.md5Body(),
		Body:          m.body(),
	}
	if sel := selectAttributes(m.attrList(), req.attrNames); len(sel) > 0 {
		r.MessageAttributes = sel
		if len(sel) == len(m.attrList()) {
			r.MD5OfAttrs = m.md5Attrs()
		} else {
			r.MD5OfAttrs = MD5OfAttributes(sel)
		}
	}
	if !req.sysAll && len(req.sys) == 0 {
		return r
	}
	for _, n := range systemAttributeOrder {
		if !req.sysAll && !req.sys[n] {
			continue
		}
		var v string
		switch n {
		case SysSenderID:
			v = m.senderID
		case SysSentTimestamp:
			v = strconv.FormatInt(m.sentAt/int64(time.Millisecond), 10)
		case SysApproximateReceiveCount:
			v = strconv.Itoa(int(m.receiveCount))
		case SysApproximateFirstReceiveTimestamp:
			v = strconv.FormatInt(m.firstReceiveAt, 10)
		case SysSequenceNumber:
			v = m.x().sequenceNum
		case SysMessageDeduplicationID:
			v = m.x().dedupID
		case SysMessageGroupID:
			v = m.x().groupID
		case SysAWSTraceHeader:
			v = m.x().traceHeader
		case SysDeadLetterQueueSourceArn:
			v = m.x().dlqSource
		}
		if v != "" {
			r.Attributes = append(r.Attributes, Attribute{n, v})
		}
	}
	return r
}

// deadLetter moves messages from src to its dead-letter queue. It runs
// without src's lock held and takes one queue lock, the target's, which may
// be src again (a queue that is its own DLQ). A message whose DLQ has gone
// stays in src.
func (e *Engine) deadLetter(src *Queue, moves []*message) {
	if len(moves) == 0 {
		return
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
	if target.deleted {
		return
	}
	if target != src {
		src.deadLettered.Add(int64(len(moves)))
	}
	for _, m := range moves {
		c := &message{
			data: m.data, attrs: m.attrs,
			senderID: m.senderID, sentAt: m.sentAt,
			receiveCount: m.receiveCount, firstReceiveAt: m.firstReceiveAt, index: -1,
			receivesBefore: m.receiveCount,
		}
		e := *m.x()
		if source != "" {
			e.dlqSource = source
		}
		if target.config.fifo && source != "" {
			c.sentAt = now.UnixNano() // FIFO DLQs restart retention; standard ones keep it
			// "the original message's deduplication ID will be replaced with
			// the original message's ID" (the developer guide, DLQ redrive),
			// so two messages that shared a deduplication ID both stay.
			e.dedupID = m.id()
		}
		c.setExt(e)
		zero := 0
		target.enqueue(c, &zero, now)
		// It has been received, so later receives find it by its handles
		// (deliver records only a first receive).
		target.handles[c.seq] = c
	}
}

// Delete deletes the message a receipt handle names. A handle of an earlier
// receive, or of a message already deleted, succeeds and changes nothing, as
// AWS documents for standard queues.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html
func (q *Queue) Delete(handle string) error {
	if handle == "" {
		return missing("ReceiptHandle")
	}
	uid, seq, gen, ok := decodeHandle(handle)
	if !ok || uid != q.uid {
		return ErrReceiptHandleIsInvalid.New("The input receipt handle \"%s\" is not a valid receipt handle.", handle)
	}
	q.lock()
	defer q.unlock()
	m := q.handles[seq]
	if q.fifo != nil {
		q.promote(q.engine.clock.Now())
		if m != nil && (m.handleGen != gen || m.state != stateInflight) {
			return invalidValue(handle, "ReceiptHandle", "The receipt handle has expired.")
		}
	}
	if m == nil || m.handleGen != gen {
		return nil
	}
	q.unlink(m)
	q.drop(m)
	if m.group != nil {
		q.fifo.markReady(m.group)
		q.wake()
	}
	return nil
}

// unlink takes m out of whichever container holds it. Callers hold mu.
func (q *Queue) unlink(m *message) {
	switch m.state {
	case stateInflight:
		q.inflight.remove(m)
		q.leaveInflight(m)
	case stateReturned:
		if m.group != nil {
			m.group.msgs.remove(m)
			q.fifo.visible--
		} else {
			q.returned.remove(m)
		}
	case stateDelayed:
		q.delayed.remove(m)
	}
}

// ChangeVisibility sets a received message's visibility timeout, counted
// from now. The total since the receive may not pass 12 hours.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
func (q *Queue) ChangeVisibility(handle string, timeout int) error {
	if handle == "" {
		return missing("ReceiptHandle")
	}
	if timeout < 0 || timeout > 43200 {
		return invalidValue(strconv.Itoa(timeout), "VisibilityTimeout", "VisibilityTimeout must be an integer between 0 and 43200")
	}
	uid, seq, gen, ok := decodeHandle(handle)
	if !ok || uid != q.uid {
		return ErrReceiptHandleIsInvalid.New("The input receipt handle \"%s\" is not a valid receipt handle.", handle)
	}
	q.lock()
	defer q.unlock()
	now := q.engine.clock.Now()
	q.promote(now)
	m := q.handles[seq]
	if m == nil || m.handleGen != gen || (q.fifo != nil && m.state != stateInflight) {
		return invalidValue(handle, "ReceiptHandle", "Message does not exist or is not available for visibility timeout change.")
	}
	if now.Add(time.Duration(timeout)*time.Second).Sub(time.Unix(0, m.receivedAt)) > 12*time.Hour {
		return invalidValue(strconv.Itoa(timeout), "VisibilityTimeout", "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]")
	}
	q.unlink(m)
	m.visibleAt = now.Add(time.Duration(timeout) * time.Second).UnixNano()
	if timeout == 0 {
		q.makeVisible(m)
		q.wake()
		return nil
	}
	q.enterInflight(m)
	return nil
}
