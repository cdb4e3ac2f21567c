package delivery

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/retrypolicy"
)

type fakeSigner struct{ calls int }

func (f *fakeSigner) Sign(version, text string) (string, error) {
	f.calls++
	return "sig" + version, nil
}

type fakeQueue struct {
	fifo   bool
	policy string
	sent   []QueueMessage
	err    error
}

func (q *fakeQueue) Fifo() bool              { return q.fifo }
func (q *fakeQueue) Policy() (string, error) { return q.policy, nil }
func (q *fakeQueue) Send(m QueueMessage) error {
	if q.err != nil {
		return q.err
	}
	q.sent = append(q.sent, m)
	return nil
}

type fakeQueues map[string]*fakeQueue

func (f fakeQueues) Queue(arn string) (Queue, error) {
	if q, ok := f[arn]; ok {
		return q, nil
	}
	return nil, errors.New("the queue does not exist")
}

const (
	topicArn = "arn:aws:sns:us-east-1:000000000000:t"
	queueArn = "arn:aws:sqs:us-east-1:000000000000:q"
	subArn   = topicArn + ":11111111-2222-4333-8444-555555555555"
)

func newTestDispatcher(qs fakeQueues, signer Signer, enforce bool) *Dispatcher {
	return New(Options{
		Queues: qs, Signer: signer, EnforcePolicies: enforce,
		Clock: clock.NewManual(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
		Links: Links{
			Base:     func() string { return "http://localhost:4566" },
			CertFile: func() (string, error) { return "SimpleNotificationService-abc.pem", nil },
		},
	})
}

func message() *Message {
	return &Message{
		ID: "m-1", TopicArn: topicArn, Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 678900000, time.UTC),
		Body: "hi", SignatureVersion: "1",
		Attributes: []Attribute{{Name: "z", DataType: "String", StringValue: "last"}, {Name: "a", DataType: "Binary", BinaryValue: []byte{1}}},
	}
}

func TestEnvelopeExactText(t *testing.T) {
	t.Parallel()
	q := &fakeQueue{}
	signer := &fakeSigner{}
	d := newTestDispatcher(fakeQueues{queueArn: q}, signer, false)
	m := message()
	m.Subject = "s"
	sub := Subscriber{Arn: subArn, Protocol: "sqs", Endpoint: queueArn}
	if err := d.Deliver(m, sub); err != nil {
		t.Fatal(err)
	}
	want := `{
  "Type" : "Notification",
  "MessageId" : "m-1",
  "TopicArn" : "arn:aws:sns:us-east-1:000000000000:t",
  "Subject" : "s",
  "Message" : "hi",
  "Timestamp" : "2025-01-02T03:04:05.678Z",
  "SignatureVersion" : "1",
  "Signature" : "sig1",
  "SigningCertURL" : "http://localhost:4566/_fanout/sns/SimpleNotificationService-abc.pem",
  "UnsubscribeURL" : "http://localhost:4566/_fanout/sns/?Action=Unsubscribe&SubscriptionArn=` + subArn + `",
  "MessageAttributes" : {
    "z" : {"Type":"String","Value":"last"},
    "a" : {"Type":"Binary","Value":"AQ=="}
  }
}`
	if got := q.sent[0].Body; got != want {
		t.Fatalf("envelope\n%s\nwant\n%s", got, want)
	}
	if q.sent[0].SenderID != SenderID || len(q.sent[0].Attributes) != 0 {
		t.Fatalf("sent %+v", q.sent[0])
	}
	// A second subscriber of the same protocol reuses the signature.
	if err := d.Deliver(m, Subscriber{Arn: subArn + "x", Protocol: "sqs", Endpoint: queueArn}); err != nil {
		t.Fatal(err)
	}
	if signer.calls != 1 {
		t.Fatalf("signed %d times", signer.calls)
	}
}

func TestFifoAndReplayedEnvelopes(t *testing.T) {
	t.Parallel()
	q := &fakeQueue{fifo: true}
	d := newTestDispatcher(fakeQueues{queueArn: q}, &fakeSigner{}, false)
	m := message()
	m.Attributes = nil
	m.Fifo, m.GroupID, m.DedupID, m.SequenceNumber = true, "g", "d", "10000000000000000001"
	sub := Subscriber{Arn: subArn, Protocol: "sqs", Endpoint: queueArn}
	if err := d.Deliver(m.AsReplay(), sub); err != nil {
		t.Fatal(err)
	}
	want := `{
  "Type" : "Notification",
  "MessageId" : "m-1",
  "SequenceNumber" : "10000000000000000001",
  "TopicArn" : "arn:aws:sns:us-east-1:000000000000:t",
  "Message" : "hi",
  "Timestamp" : "2025-01-02T03:04:05.678Z",
  "UnsubscribeURL" : "http://localhost:4566/_fanout/sns/?Action=Unsubscribe&SubscriptionArn=` + subArn + `",
  "Replayed" : true
}`
	if got := q.sent[0]; got.Body != want || got.GroupID != "g" || got.DeduplicationID != "d" {
		t.Fatalf("sent %+v\nwant body\n%s", got, want)
	}
}

func TestJSONStringEscaping(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":           `"plain"`,
		`q"b\`:            `"q\"b\\"`,
		"a\nb\r\tc\b\f":   `"a\nb\r\tc\b\f"`,
		"\x00\x1f":        `"\u0000\u001f"`,
		"</script>&é/☃":   `"</script>&é/☃"`,
		"\u2028 and \x7f": "\"\u2028 and \x7f\"",
	} {
		var b strings.Builder
		writeJSONString(&b, in)
		if b.String() != want {
			t.Errorf("%q -> %s, want %s", in, b.String(), want)
		}
	}
}

func TestRawDeliveryAndGroupForwarding(t *testing.T) {
	t.Parallel()
	std := &fakeQueue{}
	d := newTestDispatcher(fakeQueues{queueArn: std}, &fakeSigner{}, false)
	m := message()
	m.GroupID = "fair"
	m.Attributes = append(m.Attributes, Attribute{Name: "arr", DataType: "String.Array", StringValue: `["x"]`})
	if err := d.Deliver(m, Subscriber{Arn: subArn, Protocol: "sqs", Endpoint: queueArn, Raw: true}); err != nil {
		t.Fatal(err)
	}
	got := std.sent[0]
	if got.Body != "hi" || got.GroupID != "fair" || len(got.Attributes) != 3 || got.Attributes[2].DataType != "String" {
		t.Fatalf("sent %+v", got)
	}
	if m.Attributes[2].DataType != "String.Array" {
		t.Fatal("mapping changed the published message")
	}
}

func TestFailuresAndSkipsAreCounted(t *testing.T) {
	t.Parallel()
	broken := &fakeQueue{err: errors.New("InvalidParameterValue: too big")}
	d := newTestDispatcher(fakeQueues{queueArn: broken}, &fakeSigner{}, false)
	m := message()
	if err := d.Deliver(m, Subscriber{Arn: "s1", Protocol: "sqs", Endpoint: queueArn}); err == nil {
		t.Fatal("no error from a failing queue")
	}
	if err := d.Deliver(m, Subscriber{Arn: "s2", Protocol: "sqs", Endpoint: queueArn + "-gone"}); err == nil {
		t.Fatal("no error for a missing queue")
	}
	if err := d.Deliver(m, Subscriber{Arn: "s3", Protocol: "pigeon", Endpoint: "coop"}); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("unknown protocol: %v", err)
	}
	s := d.Stats()
	if s.Failed != 2 || s.NotDelivered != 1 || s.Delivered != 0 || s.Dropped != 2 || len(s.Failures) != 2 || len(s.Subscriptions) != 3 {
		t.Fatalf("stats %+v", s)
	}
	f := s.Failures[1]
	if !f.ClientError || f.SubscriptionArn != "s2" || !strings.Contains(f.Reason, "does not exist") || !f.Time.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("failure %+v", f)
	}
	for i := 0; i < recentFailures+5; i++ {
		_ = d.Deliver(m, Subscriber{Arn: "s1", Protocol: "sqs", Endpoint: queueArn})
	}
	if n := len(d.Stats().Failures); n != recentFailures {
		t.Fatalf("kept %d failures", n)
	}
}

func TestDispatcherIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	d := newTestDispatcher(fakeQueues{}, &fakeSigner{}, true)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				_ = d.Deliver(message(), Subscriber{Arn: "s", Protocol: "sqs", Endpoint: queueArn})
				_ = d.Stats()
			}
		}()
	}
	wg.Wait()
	if d.Stats().Failed != 400 {
		t.Fatalf("stats %+v", d.Stats())
	}
}

func TestTallyCountsLikeTheLookupAcrossResetsAndDispatchers(t *testing.T) {
	t.Parallel()
	ok := &fakeQueue{}
	d := newTestDispatcher(fakeQueues{queueArn: ok}, &fakeSigner{}, false)
	var tally Tally
	sub := Subscriber{Arn: "s1", Protocol: "sqs", Endpoint: queueArn, Tally: &tally}
	counts := func(d *Dispatcher) (total, s1 int64) {
		s := d.Stats()
		for _, c := range s.Subscriptions {
			if c.SubscriptionArn == "s1" {
				s1 = c.Delivered
			}
		}
		return s.Delivered, s1
	}
	for range 3 {
		if err := d.Deliver(message(), sub); err != nil {
			t.Fatal(err)
		}
	}
	if total, s1 := counts(d); total != 3 || s1 != 3 {
		t.Fatalf("delivered %d, s1 %d; want 3 and 3", total, s1)
	}
	d.Reset() // the tally's counts are stale now
	if err := d.Deliver(message(), sub); err != nil {
		t.Fatal(err)
	}
	if total, s1 := counts(d); total != 1 || s1 != 1 {
		t.Fatalf("after Reset: delivered %d, s1 %d; want 1 and 1", total, s1)
	}
	other := newTestDispatcher(fakeQueues{queueArn: ok}, &fakeSigner{}, false)
	if err := other.Deliver(message(), sub); err != nil {
		t.Fatal(err)
	}
	if total, s1 := counts(other); total != 1 || s1 != 1 {
		t.Fatalf("another dispatcher: delivered %d, s1 %d", total, s1)
	}
	if total, s1 := counts(d); total != 1 || s1 != 1 {
		t.Fatalf("the first dispatcher counted another's delivery: %d, %d", total, s1)
	}
}

// A delivery to a queue that succeeds keeps no job and no Record, only
// what makes one when read: it reads as the Record the full path keeps.
func TestQueueDeliveryRecordsLikeAJob(t *testing.T) {
	t.Parallel()
	d := newTestDispatcher(fakeQueues{queueArn: &fakeQueue{}}, &fakeSigner{}, false)
	lean := Subscriber{Arn: "lean", Protocol: "sqs", Endpoint: queueArn, Raw: true}
	policy := retrypolicy.Default("sqs")
	full := Subscriber{Arn: "full", Protocol: "sqs", Endpoint: queueArn, Raw: true, Policy: &policy} // a policy takes the job path
	m := message()
	for _, sub := range []Subscriber{lean, full} {
		if err := d.Deliver(m, sub); err != nil {
			t.Fatal(err)
		}
	}
	recs := d.Deliveries(m.ID)
	if len(recs) != 2 || recs[0].SubscriptionArn != "lean" || recs[1].SubscriptionArn != "full" {
		t.Fatalf("records %+v", recs)
	}
	recs[0].SubscriptionArn = "full"
	a, _ := json.Marshal(recs[0])
	b, _ := json.Marshal(recs[1])
	if string(a) != string(b) {
		t.Fatalf("lean record\n%s\nfull one\n%s", a, b)
	}
	if v, ok := d.Message(m.ID); !ok || v.Body != "hi" {
		t.Fatalf("message view %+v %v", v, ok)
	}
	if got := d.Records(Query{SubscriptionArn: "lean", Status: StatusDelivered}); len(got) != 1 {
		t.Fatalf("query by subscription and status: %+v", got)
	}
}

// lookupQueue is a fakeQueue that tells when it was deleted.
type lookupQueue struct {
	fakeQueue
	deleted bool
}

func (q *lookupQueue) Deleted() bool { return q.deleted }

// Send refuses a deleted queue's messages, as SQS's queues do.
func (q *lookupQueue) Send(m QueueMessage) error {
	if q.deleted {
		return errors.New("the queue does not exist")
	}
	return q.fakeQueue.Send(m)
}

type countingQueues struct {
	byArn   map[string]*lookupQueue
	lookups int
}

func (c *countingQueues) Queue(arn string) (Queue, error) {
	c.lookups++
	if q, ok := c.byArn[arn]; ok {
		return q, nil
	}
	return nil, errors.New("the queue does not exist")
}

func TestTallyRemembersTheQueueUntilItIsDeleted(t *testing.T) {
	t.Parallel()
	first := &lookupQueue{}
	qs := &countingQueues{byArn: map[string]*lookupQueue{queueArn: first}}
	d := New(Options{Queues: qs, Clock: clock.NewManual(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))})
	var tally Tally
	sub := Subscriber{Arn: subArn, Protocol: "sqs", Endpoint: queueArn, Raw: true, Tally: &tally}
	for range 3 {
		if err := d.Deliver(message(), sub); err != nil {
			t.Fatal(err)
		}
	}
	if qs.lookups != 1 || len(first.sent) != 3 {
		t.Fatalf("%d lookups, %d sent; want 1 and 3", qs.lookups, len(first.sent))
	}
	first.deleted = true
	again := &lookupQueue{}
	qs.byArn[queueArn] = again
	if err := d.Deliver(message(), sub); err != nil {
		t.Fatal(err)
	}
	if qs.lookups != 2 || len(first.sent) != 3 || len(again.sent) != 1 {
		t.Fatalf("after the delete: %d lookups, %d and %d sent", qs.lookups, len(first.sent), len(again.sent))
	}
	// Without a Tally, or with another dispatcher, it is looked up each time.
	other := New(Options{Queues: qs})
	if err := other.Deliver(message(), sub); err != nil {
		t.Fatal(err)
	}
	if err := d.Deliver(message(), Subscriber{Arn: subArn, Protocol: "sqs", Endpoint: queueArn, Raw: true}); err != nil {
		t.Fatal(err)
	}
	if qs.lookups != 4 || len(again.sent) != 3 {
		t.Fatalf("%d lookups, %d sent; want 4 and 3", qs.lookups, len(again.sent))
	}
}

// deferringQueue is a fakeQueue whose sends leave the wait for their
// record to the caller, as SQS's do with a journal.
type deferringQueue struct {
	fakeQueue
	waits   int
	waitErr error
}

type countedWait struct{ q *deferringQueue }

func (w countedWait) Wait() error { w.q.waits++; return w.q.waitErr }

func (q *deferringQueue) SendDeferred(m QueueMessage) (Waiter, error) {
	if err := q.fakeQueue.Send(m); err != nil {
		return nil, err
	}
	return countedWait{q}, nil
}

func TestDeliveriesToQueuesLeaveTheirRecordsWaitToThePublish(t *testing.T) {
	t.Parallel()
	q := &deferringQueue{}
	d := New(Options{Queues: oneQueue{q}, Clock: clock.NewManual(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))})
	sub := Subscriber{Arn: subArn, Protocol: "sqs", Endpoint: queueArn, Raw: true}

	w, err := d.DeliverJournaled(message(), sub)
	if err != nil || w == nil {
		t.Fatalf("DeliverJournaled = %v, %v; want a Waiter", w, err)
	}
	if len(q.sent) != 1 || q.waits != 0 {
		t.Fatalf("sent %d, waited %d before the caller's Wait; want 1 and 0", len(q.sent), q.waits)
	}
	if err := w.Wait(); err != nil || q.waits != 1 {
		t.Fatalf("Wait = %v after %d waits", err, q.waits)
	}

	// Deliver waits itself, and a record the store refused fails it.
	q.waitErr = errors.New("disk full")
	if err := d.Deliver(message(), sub); err == nil || q.waits != 2 {
		t.Fatalf("Deliver with a refused record = %v after %d waits; want the store's error after 2", err, q.waits)
	}
}
