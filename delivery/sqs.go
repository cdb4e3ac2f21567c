package delivery

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fanout/fanout/sqs"
)

// Queues is what delivery needs of SQS: queues by ARN.
type Queues interface {
	// Queue returns the queue an ARN names, or an error when there is none.
	Queue(arn string) (Queue, error)
}

// Queue is one SQS queue as delivery sees it.
type Queue interface {
	Fifo() bool
	// Policy returns the queue's Policy attribute, "" when it has none.
	Policy() (string, error)
	Send(QueueMessage) error
}

// QueueMessage is one message for a queue.
type QueueMessage struct {
	Body            string
	Attributes      []Attribute
	GroupID         string
	DeduplicationID string
	SenderID        string
	// BodyMD5, when set, is MD5OfBody(Body), computed once for every queue
	// that receives the same raw payload.
	BodyMD5 string
	// BodyChecked says Body holds only characters SQS accepts (see
	// Message.BodyChecked).
	BodyChecked bool
	// Shared, when set, is Body's one copy for every queue of a publish
	// that takes it (sqs.SharedBody); other queues ignore it.
	Shared *sqs.SharedBody
}

// SenderID is the SenderId SQS shows on messages SNS delivered (the id AWS's
// SNS service principal sends with).
const SenderID = "AIDAIT2UOQQY3AUEKVGXU"

// maxRawAttributes is SQS's limit on message attributes; SNS treats a raw
// delivery with more as a client error and drops it.
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-attributes.html
const maxRawAttributes = 10

// sqsEndpoint delivers to Amazon SQS queues, in-process. Every failure is
// client-side (the queue is gone, its policy refuses SNS, the message is
// invalid for it): the delivery goes straight to the dead-letter queue.
// https://docs.aws.amazon.com/sns/latest/dg/sns-sqs-as-subscriber.html
type sqsEndpoint struct{}

func (sqsEndpoint) remote(*Dispatcher) bool { return false }

func (sqsEndpoint) attempt(d *Dispatcher, j *job) result {
	if j.msg == nil {
		// A subscription from another account than the queue's asks the
		// queue's owner to confirm it with a message in the queue.
		if j.ctl.Type != TypeSubscriptionConfirmation {
			return clientErr("SQS endpoints take no %s", j.ctl.Type)
		}
		if err := d.sendControlToQueue(j.sub.Endpoint, j.ctl); err != nil {
			return result{err: err, client: true}
		}
		return ok()
	}
	err := d.sendToQueue(j.sub.Endpoint, j.sub.Tally, j.msg, j.sub.Raw, func() (string, error) { return d.payload(j.msg, j.sub) })
	if err != nil {
		return result{err: err, client: true}
	}
	return ok()
}

// deliverToQueue delivers a notification to a queue without a job: a send
// to a queue is made once, on the publisher's goroutine (what fails is the
// queue's fault, never retried), so only a failure needs one, for its
// record, its dead-letter queue and its log. A success is counted and
// recorded in a few words.
//
// With a journal the send's record is not waited for here: its Waiter is
// returned, so that a publish to several queues starts every record before
// it waits once, outside every lock, and the records share one sync.
//
// With a Fan (f not nil) the success is counted and recorded with the
// others of the fan, under one lock each, and the fan's one clock reading.
func (d *Dispatcher) deliverToQueue(m *Message, sub Subscriber, f *Fan) (Waiter, error) {
	gen := d.generation.Load()
	var now time.Time
	if f != nil {
		now = f.time()
	} else {
		now = d.clock.Now()
	}
	var share *sqs.SharedBody
	if f != nil {
		share = f.sharedBody()
	}
	w, err := d.sendToQueueDeferred(sub.Endpoint, sub.Tally, m, sub.Raw, share, func() (string, error) { return d.payload(m, sub) })
	if err != nil {
		if f != nil {
			f.flush() // its record follows those of the deliveries before it
		}
		_, err := d.start(d.newJob(m, nil, sub, attempted{result{err: err, client: true}}), nil)
		return nil, err
	}
	if d.generation.Load() != gen {
		return w, nil // reset meanwhile: record nothing, as a job would
	}
	if f != nil {
		f.add(sub, gen)
		return w, nil
	}
	d.records.delivered(d, gen, d.kept(m), d.stats.delivered(sub), now)
	return w, nil
}

// attempted is the endpoint of a job whose first attempt was already made.
type attempted struct{ res result }

func (attempted) remote(*Dispatcher) bool            { return false }
func (a attempted) attempt(*Dispatcher, *job) result { return a.res }

// sendToQueue sends one SNS message to an SQS queue as SNS does: body is the
// payload, raw deliveries carry the message attributes, FIFO ids carry over
// between FIFO topics and queues. It serves subscriptions and dead-letter
// queues alike. body renders the payload once the queue is known to take it.
// A subscription's Tally t remembers the queue (nil: look it up).
func (d *Dispatcher) sendToQueue(arn string, t *Tally, m *Message, raw bool, body func() (string, error)) error {
	w, err := d.sendToQueueDeferred(arn, t, m, raw, nil, body)
	if err == nil && w != nil {
		err = w.Wait()
	}
	return err
}

// sendToQueueDeferred is sendToQueue that returns the Waiter of the send's
// record (nil when nothing is recorded) instead of waiting for it. A raw
// payload that is m's Body is stored as share when share is not nil.
func (d *Dispatcher) sendToQueueDeferred(arn string, t *Tally, m *Message, raw bool, share *sqs.SharedBody, body func() (string, error)) (Waiter, error) {
	if d.opts.Queues == nil {
		return nil, errors.New("no SQS engine")
	}
	q, remembered, err := d.queueFor(arn, t, m.TopicArn)
	if err != nil {
		return nil, err
	}
	text, err := body()
	if err != nil {
		return nil, err
	}
	qm := QueueMessage{Body: text, SenderID: SenderID}
	if raw {
		if len(m.Attributes) > maxRawAttributes {
			return nil, fmt.Errorf("raw delivery of %d message attributes: SQS accepts at most %d", len(m.Attributes), maxRawAttributes)
		}
		qm.Attributes = rawAttributes(m.Attributes)
		qm.BodyMD5 = m.md5Of(text)
		qm.BodyChecked = m.BodyChecked && text == m.Body
		if share != nil && text == m.Body {
			qm.Shared = share
		}
	}
	w, err := sendAs(q, qm, m)
	if err != nil && remembered && q.(deletableQueue).Deleted() {
		// A deleted queue refuses the send, storing nothing: the queue
		// t remembered is gone, so look it up anew (it may have been
		// made again under its name).
		t.queue.Store(nil)
		if q, _, err = d.queueFor(arn, t, m.TopicArn); err != nil {
			return nil, err
		}
		w, err = sendAs(q, qm, m)
	}
	if err != nil {
		return nil, fmt.Errorf("queue %s: %v", arn, err)
	}
	return w, nil
}

// deferredQueue is a Queue whose send can leave the wait for its record to
// the caller. Those of SQS can.
type deferredQueue interface {
	SendDeferred(QueueMessage) (Waiter, error)
}

// sendAs sends qm, m's payload, to q with the ids SNS passes on, returning
// the Waiter of a deferred send.
func sendAs(q Queue, qm QueueMessage, m *Message) (Waiter, error) {
	switch {
	case m.Fifo && q.Fifo():
		// FIFO topic to FIFO queue: order and deduplication carry over.
		qm.GroupID, qm.DeduplicationID = m.GroupID, m.DedupID
	case !m.Fifo && !q.Fifo():
		// A standard topic passes MessageGroupId on to standard (fair) queues.
		qm.GroupID = m.GroupID
	}
	if dq, ok := q.(deferredQueue); ok {
		return dq.SendDeferred(qm)
	}
	return nil, q.Send(qm)
}

// queueFor is the queue an ARN names, if its policy lets topicArn send
// to it (with EnforcePolicies); t, when not nil, remembers it. It reports
// whether the queue is one t remembered.
func (d *Dispatcher) queueFor(arn string, t *Tally, topicArn string) (Queue, bool, error) {
	if d.opts.Queues == nil {
		return nil, false, errors.New("no SQS engine")
	}
	q, remembered, err := d.queueOf(arn, t)
	if err != nil {
		return nil, false, fmt.Errorf("queue %s: %v", arn, err)
	}
	if d.opts.EnforcePolicies {
		policy, err := q.Policy()
		if err != nil {
			return nil, false, fmt.Errorf("queue %s: %v", arn, err)
		}
		if ok, why := d.policies.allows(policy, arn, topicArn); !ok {
			return nil, false, fmt.Errorf("access to queue %s denied: %s", arn, why)
		}
	}
	return q, remembered, nil
}

// queueOf looks the queue of an ARN up, or finds it in t: with many queues
// the lookup (the ARN cut apart, then a namespace's and an engine's maps)
// touches cold memory on every delivery. A remembered queue serves until a
// send to it fails because it was deleted (see sendToQueue), so that the
// common send reads nothing more; with EnforcePolicies, whose check reads
// the queue first, it is checked beforehand.
func (d *Dispatcher) queueOf(arn string, t *Tally) (Queue, bool, error) {
	if t != nil {
		if r := t.queue.Load(); r != nil && r.owner == d && r.arn == arn && (!d.opts.EnforcePolicies || !r.q.Deleted()) {
			return r.q, true, nil
		}
	}
	q, err := d.opts.Queues.Queue(arn)
	if err != nil {
		return nil, false, err
	}
	if dq, ok := q.(deletableQueue); ok && t != nil {
		t.queue.Store(&resolvedQueue{owner: d, arn: arn, q: dq})
	}
	return q, false, nil
}

// deletableQueue is a Queue that tells when it was deleted, so that it can
// be remembered. Those of SQS do.
type deletableQueue interface {
	Queue
	Deleted() bool
}

// resolvedQueue is the queue a subscription's endpoint named when last
// looked up, in one dispatcher.
type resolvedQueue struct {
	owner *Dispatcher
	arn   string
	q     deletableQueue
}

// sendControlToQueue puts a signed control message (the JSON an HTTP
// endpoint receives) in a queue.
func (d *Dispatcher) sendControlToQueue(arn string, c *Control) error {
	q, _, err := d.queueFor(arn, nil, c.TopicArn)
	if err != nil {
		return err
	}
	text, err := d.controlEnvelope(c)
	if err != nil {
		return err
	}
	qm := QueueMessage{Body: text, SenderID: SenderID}
	if q.Fifo() {
		qm.GroupID, qm.DeduplicationID = c.Type, c.ID
	}
	if err := q.Send(qm); err != nil {
		return fmt.Errorf("queue %s: %v", arn, err)
	}
	return nil
}

// rawAttributes maps SNS message attributes to SQS ones for raw delivery.
// SQS has no String.Array type: such attributes arrive as String, holding
// the JSON array text.
func rawAttributes(in []Attribute) []Attribute {
	if len(in) == 0 {
		return nil
	}
	out := make([]Attribute, len(in))
	for i, a := range in {
		if a.DataType == "String.Array" {
			a.DataType = "String"
		}
		out[i] = a
	}
	return out
}

// SQS adapts fanout's SQS engine to Queues.
func SQS(e *sqs.Engine) Queues { return sqsQueues{e} }

type sqsQueues struct{ e *sqs.Engine }

func (s sqsQueues) Queue(arn string) (Queue, error) {
	q, err := s.e.QueueByArn(arn)
	if err != nil {
		return nil, errors.New("the queue does not exist")
	}
	return sqsQueue{q}, nil
}

type sqsQueue struct{ q *sqs.Queue }

func (s sqsQueue) Fifo() bool { return s.q.Fifo() }

func (s sqsQueue) Deleted() bool { return s.q.Deleted() }

func (s sqsQueue) Policy() (string, error) {
	attrs, err := s.q.Attributes([]string{sqs.AttrPolicy})
	if err != nil {
		return "", err
	}
	for _, a := range attrs {
		if a.Name == sqs.AttrPolicy {
			return a.Value, nil
		}
	}
	return "", nil
}

func (s sqsQueue) Send(m QueueMessage) error {
	w, err := s.SendDeferred(m)
	if err == nil && w != nil {
		err = w.Wait()
	}
	return err
}

// SendDeferred queues m and returns the Waiter of its record, nil when the
// engine keeps no journal; a failed Wait has taken the send back.
func (s sqsQueue) SendDeferred(m QueueMessage) (Waiter, error) {
	attrs := make([]sqs.MessageAttribute, len(m.Attributes))
	for i, a := range m.Attributes {
		attrs[i] = sqs.MessageAttribute{Name: a.Name, DataType: a.DataType, StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	w, err := s.q.SendNoReply(sqs.SendInput{
		Body: m.Body, Attributes: attrs, GroupID: m.GroupID,
		DeduplicationID: m.DeduplicationID, SenderID: m.SenderID, BodyMD5: m.BodyMD5,
		BodyChecked: m.BodyChecked, Shared: m.Shared,
	})
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "AWS.SimpleQueueService."))
	}
	return w, nil
}
