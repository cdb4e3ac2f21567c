package sqs

import (
	"crypto/md5"
	"strconv"
	"time"
	"unsafe"

	"github.com/fanout/fanout/internal/id"
)

// SendInput is one message to send.
type SendInput struct {
	Body         string
	DelaySeconds *int // nil: the queue's DelaySeconds
	Attributes   []MessageAttribute
	// SystemAttributes may only hold AWSTraceHeader.
	SystemAttributes []MessageAttribute
	GroupID          string
	DeduplicationID  string
	SenderID         string
	// BodyMD5, when set, is MD5OfBody(Body) computed by the caller: fanout's
	// SNS computes it once for all the queues a message fans out to.
	BodyMD5 string
	// BodyChecked, when true, says the caller has already checked that Body
	// holds only the characters SendMessage accepts: fanout's SNS checks a
	// published message once, with the same rule, for every queue it fans
	// out to. Send then skips that scan.
	BodyChecked bool
	// Shared, when set to the SharedBody of Body, lets the queue keep a
	// reference to the body's one copy instead of its own.
	Shared *SharedBody
}

// SendResult is what SendMessage answers.
type SendResult struct {
	MessageID      string
	MD5OfBody      string
	MD5OfAttrs     string
	MD5OfSysAttrs  string
	SequenceNumber string
}

// Send validates and enqueues one message.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
func (q *Queue) Send(in SendInput) (SendResult, error) {
	res, w, err := q.SendDeferred(in)
	if err != nil {
		return SendResult{}, err
	}
	if w != nil {
		if err := w.Wait(); err != nil {
			return SendResult{}, err
		}
	}
	return res, nil
}

// SendDeferred is Send whose wait for the store is the caller's: the
// message is queued (and visible to receives) when it returns, and the
// Waiter, nil without a Journal, returns nil once it is stored, or
// InternalFailure after taking the send back as Send does. A caller that
// sends one message to several queues (an SNS fan-out) starts every record
// before it waits, so that they share one sync. Wait holds no queue lock.
func (q *Queue) SendDeferred(in SendInput) (SendResult, Waiter, error) {
	cfg := q.cfg()
	var d draft
	var res SendResult
	if err := q.prepare(&cfg, &in, false, nil, &d, &res); err != nil {
		return SendResult{}, nil, err
	}
	if err := storeGuard.check(); err != nil {
		return SendResult{}, nil, err
	}
	d.shared = in.Shared.refFor(in.Body)
	q.lockWithRoom(d.storedSize(), d.storedSize(), 1)
	defer q.unlock()
	if q.deleted {
		return SendResult{}, nil, queueDoesNotExist()
	}
	s := q.admit(&d, in.DelaySeconds, q.engine.clock.Now(), &res)
	if !q.journaling() {
		return res, nil, nil
	}
	sw := &sendWaiter{q: q, s: [1]sent{s}}
	sw.w = q.recordSends(sw.s[:])
	return res, sw, nil
}

// SendNoReply is SendDeferred for a caller that reads no reply (fanout's
// SNS: the MessageId a queue gives a delivery is the queue's business). On
// a standard queue, with in.BodyMD5 given, the message's id is made as it
// is stored, and nothing is allocated for the reply.
func (q *Queue) SendNoReply(in SendInput) (Waiter, error) {
	if q.fifo != nil || len(in.BodyMD5) != 32 {
		_, w, err := q.SendDeferred(in) // FIFO deduplication keeps the id
		return w, err
	}
	cfg := q.cfg()
	var d draft
	if err := q.prepare(&cfg, &in, true, nil, &d, nil); err != nil {
		return nil, err
	}
	if err := storeGuard.check(); err != nil {
		return nil, err
	}
	d.shared = in.Shared.refFor(in.Body)
	q.lockWithRoom(d.storedSize(), d.storedSize(), 1)
	defer q.unlock()
	if q.deleted {
		return nil, queueDoesNotExist()
	}
	i := q.enqueue(&d, in.DelaySeconds, q.engine.clock.Now())
	if !q.journaling() {
		return nil, nil
	}
	sw := &sendWaiter{q: q, s: [1]sent{{i: i, seq: q.seq}}}
	sw.w = q.recordSends(sw.s[:])
	return sw, nil
}

// lockWithRoom takes the queue's lock to store records messages of n bytes
// in all (storedSize), the largest of largest bytes. Should they need a
// fresh mapped chunk or record page, the kernel finds and zeroes its pages
// (about 0.4 ms a MiB on a 2-core VM, ten times that where the host must
// back them) before the lock is taken, rather than while every other
// sender and receiver of the queue waits for it; the chunk and the page
// are staged for the sends, and what they leave unused is freed when the
// lock is released. Pages too small to be mapped are made under the lock.
func (q *Queue) lockWithRoom(n, largest, records int) {
	q.lock()
	size := q.msgs.chunks.regionFor(n, largest)
	page := q.msgs.slab.pageFor(records)
	if page < bigRegion {
		page = 0
	}
	if size == 0 && page == 0 {
		return
	}
	q.unlock()
	var r, p region
	if size > 0 {
		r = allocRegion(size, false)
	}
	if page > 0 {
		p = allocRegion(page, true)
	}
	q.lock()
	if q.deleted {
		r.free()
		p.free()
		return
	}
	if size > 0 {
		q.msgs.chunks.stage(r)
	}
	if page > 0 {
		q.msgs.slab.stage(p)
	}
}

// storedSize is about what d takes in its queue's chunks: exact but for its
// rare system attributes, for which it counts a margin.
func (d *draft) storedSize() int { return bodyAt + len(d.body) + len(d.attrs) + 64 }

// sendWaiter waits for a deferred send's record and undoes it on failure.
type sendWaiter struct {
	q *Queue
	w Waiter
	s [1]sent
}

func (sw *sendWaiter) Wait() error {
	if err := durable(sw.w); err != nil {
		sw.q.undoSends(sw.s[:])
		return err
	}
	return nil
}

// admit stores a prepared message; on a FIFO queue it first deduplicates it
// and numbers it. A duplicate within the window is answered with the first
// send's MessageId and SequenceNumber and not stored. Callers hold mu.
func (q *Queue) admit(d *draft, delay *int, now time.Time, res *SendResult) sent {
	var s sent
	if q.fifo != nil {
		s.key = dedupKeyFor(q.config, d.ext.groupID, d.ext.dedupID)
		if e, dup := q.fifo.checkDedup(s.key, now); dup {
			res.MessageID, res.SequenceNumber = e.messageID, e.sequenceNumber
			s.i, s.dedup = none, e
			return s
		}
		d.ext.sequenceNum = q.fifo.nextSequence()
		// d.id() is a string of its own, not the reply's text in a
		// caller's SendBatchBuffer, reused long before the window ends.
		s.dedup = dedupEntry{d.id(), d.ext.sequenceNum, now}
		s.key = q.fifo.remember(s.key, s.dedup)
		res.SequenceNumber = d.ext.sequenceNum
	}
	s.i = q.enqueue(d, delay, now)
	s.seq = q.seq
	return s
}

// prepare validates in against the queue's settings cfg (a copy) and builds
// the message, outside the queue lock. The draft's body (and ids) may still
// be slices of the request: enqueue copies them into the queue's chunks.
// It writes the message to d and its reply to res, where the caller keeps
// them (a batch's are arrays of ten), rather than returning copies. With
// noReply (a standard queue, in.BodyMD5 given) it makes no id and no
// reply: put makes the id. ids, if not nil, is hexIDs bytes the message id
// and the body's MD5 are written to as text, not written again until the
// reply is gone: a batch's are in its SendBatchBuffer.
func (q *Queue) prepare(cfg *config, in *SendInput, noReply bool, ids []byte, d *draft, res *SendResult) error {
	if in.Body == "" {
		return missing("MessageBody")
	}
	if !in.BodyChecked && !validBody(in.Body) {
		return ErrInvalidMessageContents.New(invalidContents)
	}
	if in.DelaySeconds != nil {
		delay := *in.DelaySeconds
		if delay < 0 || delay > 900 {
			return invalidValue(strconv.Itoa(delay), "DelaySeconds", "DelaySeconds must be >= 0 and <= 900.")
		}
	}
	attrs, aerr := checkAttributes(in.Attributes)
	if aerr != nil {
		return aerr
	}
	if size := len(in.Body) + attributesSize(attrs); size > cfg.maximumMessageSize {
		return ErrInvalidParameterValue.New("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", cfg.maximumMessageSize)
	}
	var trace string
	var md5Sys string
	for _, a := range in.SystemAttributes {
		if a.Name != "AWSTraceHeader" {
			return ErrInvalidParameterValue.New("Message system attribute name '%s' is invalid.", a.Name)
		}
		if a.DataType != "String" {
			return ErrInvalidParameterValue.New("Message system attribute 'AWSTraceHeader' must be of type 'String'.")
		}
		if err := checkAttributeValue(a, "system"); err != nil {
			return err
		}
		trace = a.StringValue
		md5Sys = MD5OfAttributes(in.SystemAttributes)
	}
	if err := q.checkIDs(cfg, in); err != nil {
		return err
	}
	dedupID := in.DeduplicationID
	if cfg.fifo && dedupID == "" {
		dedupID = contentDedupID(in.Body)
	}
	if noReply {
		*d = draft{newID: true, body: in.Body, sender: in.SenderID,
			ext: messageExt{traceHeader: trace, groupID: in.GroupID, dedupID: dedupID}}
		d.putMD5(in)
		if len(attrs) > 0 {
			d.attrs = encodeAttrs(attrs, MD5OfAttributes(attrs))
		}
		return nil
	}
	*d = draft{
		body:   in.Body,
		sender: in.SenderID,
		ext:    messageExt{traceHeader: trace, groupID: in.GroupID, dedupID: dedupID},
	}
	id.NewRaw((*[16]byte)(d.ids[:16]))
	d.putMD5(in)
	// The reply's message id and MD5 share one allocation.
	buf := ids
	if buf == nil {
		buf = make([]byte, hexIDs)
	}
	idsText(buf, d.ids[:])
	text := unsafe.String(&buf[0], hexIDs) // buf outlives the reply
	*res = SendResult{MessageID: text[:36], MD5OfBody: text[36:], MD5OfSysAttrs: md5Sys}
	if len(attrs) > 0 {
		res.MD5OfAttrs = MD5OfAttributes(attrs)
		d.attrs = encodeAttrs(attrs, res.MD5OfAttrs)
	}
	return nil
}

// putMD5 puts the MD5 of in's body into d.ids: in.BodyMD5 if the caller
// gave one in the form replies show, else computed here.
func (d *draft) putMD5(in *SendInput) {
	if len(in.BodyMD5) == 32 && id.LowerHex(d.ids[16:], in.BodyMD5) {
		return
	}
	sum := md5.Sum(unsafe.Slice(unsafe.StringData(in.Body), len(in.Body))) // read-only view, no copy
	copy(d.ids[16:], sum[:])
}

// checkIDs validates MessageGroupId and MessageDeduplicationId for the queue type.
func (q *Queue) checkIDs(cfg *config, in *SendInput) error {
	if in.GroupID != "" && !validMessageID(in.GroupID) {
		return invalidValue(in.GroupID, "MessageGroupId", "MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.")
	}
	if in.DeduplicationID != "" && !validMessageID(in.DeduplicationID) {
		return invalidValue(in.DeduplicationID, "MessageDeduplicationId", "MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.")
	}
	if !cfg.fifo {
		if in.DeduplicationID != "" {
			return invalidValue(in.DeduplicationID, "MessageDeduplicationId", "The request includes a parameter that is not valid for this queue type.")
		}
		return nil
	}
	if in.DelaySeconds != nil && *in.DelaySeconds != 0 {
		return invalidValue(strconv.Itoa(*in.DelaySeconds), "DelaySeconds", "The request include parameter that is not valid for this queue type.")
	}
	if in.GroupID == "" {
		return missing("MessageGroupId")
	}
	if in.DeduplicationID == "" && !cfg.contentDedup {
		return ErrInvalidParameterValue.New("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	}
	return nil
}

// validMessageID checks a MessageGroupId or MessageDeduplicationId: 1 to 128
// alphanumeric or punctuation characters.
func validMessageID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// enqueue stores d, delayed by delay (nil: the queue's DelaySeconds), and
// returns its record. Callers hold mu.
func (q *Queue) enqueue(d *draft, delay *int, now time.Time) uint32 {
	q.seq++
	size := d.storedSize()
	q.msgs.firstPages(size) // an empty store: keepsShared is false
	if d.shared == 0 && q.msgs.keepsShared(size, len(d.body)) {
		if ref := sharedBodies.put(d.body); ref != 0 { // 0: no room, copied
			d.shared, d.sharedOwn = ref, true
		}
	}
	i := q.msgs.slab.alloc()
	r := q.rec(i)
	r.seq = q.seq
	r.sentAt = d.sentAt
	if r.sentAt == 0 {
		r.sentAt = now.UnixNano()
	}
	r.receiveCount, r.firstReceiveAt, r.receivesBefore = d.receiveCount, d.firstReceiveAt, d.receivesBefore
	r.index = -1
	q.msgs.put(r, d)
	if d.ext.groupID != "" {
		g := q.groups.get(d.ext.groupID, &q.msgs.slab)
		g.size++
		r.group = g.idx
	}
	dl := q.config.delaySeconds
	if delay != nil {
		dl = *delay
	}
	if dl > 0 {
		r.visibleAt = now.Add(time.Duration(dl) * time.Second).UnixNano()
		r.state = stateDelayed
		q.delayed.push(i)
		q.dueAtLeast(r.visibleAt)
		return i
	}
	r.visibleAt = now.UnixNano()
	switch {
	case q.fifo != nil:
		q.fifoPush(i)
	case r.receiveCount > 0 || r.sentAt != now.UnixNano():
		// Moved messages keep their age: order them by it among the returned.
		r.state = stateReturned
		q.returned.push(i)
	default:
		r.state = stateReady
		q.ready.push(i)
	}
	q.wake()
	return i
}
