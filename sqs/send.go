package sqs

import (
	"crypto/md5"
	"encoding/hex"
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
	m, res, err := q.prepare(in)
	if err != nil {
		return SendResult{}, err
	}
	if err := storeGuard.check(); err != nil {
		return SendResult{}, err
	}
	q.lock()
	if q.deleted {
		q.unlock()
		return SendResult{}, queueDoesNotExist()
	}
	q.admit(m, in.DelaySeconds, q.engine.clock.Now(), &res)
	q.unlock()
	return res, nil
}

// admit stores a prepared message; on a FIFO queue it first deduplicates it
// and numbers it. A duplicate within the window is answered with the first
// send's MessageId and SequenceNumber and not stored. Callers hold mu.
func (q *Queue) admit(m *message, delay *int, now time.Time, res *SendResult) {
	if q.fifo != nil {
		key := dedupKeyFor(q.config, m.x().groupID, m.x().dedupID)
		if e, dup := q.fifo.checkDedup(key, now); dup {
			res.MessageID, res.SequenceNumber = e.messageID, e.sequenceNumber
			return
		}
		m.ext.sequenceNum = q.fifo.nextSequence() // FIFO messages always have an ext
		q.fifo.remember(key, dedupEntry{m.id(), m.ext.sequenceNum, now})
		res.SequenceNumber = m.ext.sequenceNum
	}
	q.enqueue(m, delay, now)
}

// prepare validates in against the queue's settings and builds the message,
// outside the queue lock.
func (q *Queue) prepare(in SendInput) (*message, SendResult, error) {
	cfg := q.cfg()
	if in.Body == "" {
		return nil, SendResult{}, missing("MessageBody")
	}
	if !validBody(in.Body) {
		return nil, SendResult{}, ErrInvalidMessageContents.New(invalidContents)
	}
	if in.DelaySeconds != nil {
		d := *in.DelaySeconds
		if d < 0 || d > 900 {
			return nil, SendResult{}, invalidValue(strconv.Itoa(d), "DelaySeconds", "DelaySeconds must be >= 0 and <= 900.")
		}
	}
	attrs, aerr := checkAttributes(in.Attributes)
	if aerr != nil {
		return nil, SendResult{}, aerr
	}
	if size := len(in.Body) + attributesSize(attrs); size > cfg.maximumMessageSize {
		return nil, SendResult{}, ErrInvalidParameterValue.New("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", cfg.maximumMessageSize)
	}
	var trace string
	var md5Sys string
	for _, a := range in.SystemAttributes {
		if a.Name != "AWSTraceHeader" {
			return nil, SendResult{}, ErrInvalidParameterValue.New("Message system attribute name '%s' is invalid.", a.Name)
		}
		if a.DataType != "String" {
			return nil, SendResult{}, ErrInvalidParameterValue.New("Message system attribute 'AWSTraceHeader' must be of type 'String'.")
		}
		if err := checkAttributeValue(a, "system"); err != nil {
			return nil, SendResult{}, err
		}
		trace = a.StringValue
		md5Sys = MD5OfAttributes(in.SystemAttributes)
	}
	if err := q.checkIDs(cfg, in); err != nil {
		return nil, SendResult{}, err
	}
	dedupID := in.DeduplicationID
	if cfg.fifo && dedupID == "" {
		dedupID = contentDedupID(in.Body)
	}
	// The message id, the body's MD5 and the body share one allocation,
	// which also detaches the body from whatever buffer it came in.
	buf := make([]byte, bodyAt+len(in.Body))
	id.PutUUID((*[36]byte)(buf[:36]))
	if len(in.BodyMD5) == 32 {
		copy(buf[36:bodyAt], in.BodyMD5)
	} else {
		sum := md5.Sum(unsafe.Slice(unsafe.StringData(in.Body), len(in.Body))) // read-only view, no copy
		hex.Encode(buf[36:bodyAt], sum[:])
	}
	copy(buf[bodyAt:], in.Body)
	m := &message{
		data:     unsafe.String(&buf[0], len(buf)), // buf is never written again
		senderID: q.engine.intern(in.SenderID),
		index:    -1,
	}
	if len(attrs) > 0 {
		m.attrs = &attrSet{list: attrs, md5: MD5OfAttributes(attrs)}
	}
	m.setExt(messageExt{traceHeader: trace, groupID: in.GroupID, dedupID: dedupID})
	if cfg.fifo && m.ext == nil {
		m.ext = &messageExt{} // admit writes its sequence number
	}
	return m, SendResult{MessageID: m.id(), MD5OfBody: m.md5Body(), MD5OfAttrs: m.md5Attrs(), MD5OfSysAttrs: md5Sys}, nil
}

// checkIDs validates MessageGroupId and MessageDeduplicationId for the queue type.
func (q *Queue) checkIDs(cfg config, in SendInput) error {
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

// enqueue stores m, delayed by delay (nil: the queue's DelaySeconds).
// Callers hold mu.
func (q *Queue) enqueue(m *message, delay *int, now time.Time) {
	q.seq++
	m.seq, m.order = q.seq, q.seq
	if m.sentAt == 0 {
		m.sentAt = now.UnixNano()
	}
	if q.fifo != nil {
		m.group = q.fifo.group(m.groupID())
		m.group.size++
	} else if g := m.groupID(); g != "" {
		q.groupsHeld[g]++
	}
	d := q.config.delaySeconds
	if delay != nil {
		d = *delay
	}
	if d > 0 {
		m.visibleAt = now.Add(time.Duration(d) * time.Second).UnixNano()
		m.state = stateDelayed
		q.delayed.push(m)
		return
	}
	m.visibleAt = now.UnixNano()
	switch {
	case q.fifo != nil:
		q.fifo.push(m)
	case m.receiveCount > 0 || m.sentAt != now.UnixNano():
		// Moved messages keep their age: order them by it among the returned.
		m.state = stateReturned
		q.returned.push(m)
	default:
		m.state = stateReady
		q.ready.push(m)
	}
	q.wake()
}
