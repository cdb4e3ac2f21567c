package delivery

import (
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/retrypolicy"
)

// memJournal keeps what a store would: the last state of each live job.
type memJournal struct {
	mu   sync.Mutex
	jobs map[uint64]JobState
	puts int
}

type doneWaiter struct{}

func (doneWaiter) Wait() error { return nil }

func (m *memJournal) Record(c Change) Waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs == nil || c.Reset {
		m.jobs = map[uint64]JobState{}
	}
	for _, st := range c.Ended {
		delete(m.jobs, st.ID)
	}
	for _, st := range c.Jobs {
		m.jobs[st.ID] = st
		m.puts++
	}
	return doneWaiter{}
}

func (m *memJournal) live() []JobState {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []JobState
	for _, st := range m.jobs {
		out = append(out, st)
	}
	return out
}

func journaledDispatcher(clk clock.Clock, ep endpoint, j Journal) *Dispatcher {
	d := New(Options{Clock: clk, Signer: &fakeSigner{}, Journal: j, Links: Links{
		Base: func() string { return "http://localhost" }, CertFile: func() (string, error) { return "c.pem", nil },
	}})
	d.endpoints["fake"] = ep
	return d
}

func dump(t *testing.T, d *Dispatcher) []JobState {
	t.Helper()
	var out []JobState
	if err := d.Dump(func(c Change) error {
		out = append(out, c.Jobs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// A pending retry dumped from one dispatcher and restored into another
// resumes at the time it was due with the attempts it had made: the policy's
// remaining attempts, not a fresh schedule.
func TestARestoredRetryResumesWhereItWas(t *testing.T) {
	t.Parallel()
	start := time.Unix(1700000000, 0)
	clk := clock.NewManual(start)
	pol := retrypolicy.Default("http") // 4 attempts, 20 s apart
	sub := Subscriber{Arn: "arn:aws:sns:us-east-1:1:t:s", Protocol: "fake", Policy: &pol}
	topic := "arn:aws:sns:us-east-1:1:t"

	first := &fakeEndpoint{isRemote: true}
	mem := &memJournal{}
	d1 := journaledDispatcher(clk, first, mem)
	if err := d1.Deliver(&Message{ID: "m", TopicArn: topic, Body: "x", Timestamp: start}, sub); err != nil {
		t.Fatal(err)
	}
	settle(t, d1)
	jobs := dump(t, d1)
	if first.attempts.Load() != 1 || len(jobs) != 1 || jobs[0].Attempts != 1 || !jobs[0].Due.Equal(start.Add(20*time.Second)) ||
		jobs[0].Message.ID != "m" || jobs[0].TopicArn != topic || jobs[0].Policy.Attempts() != 4 {
		t.Fatalf("%d attempts; dumped %+v", first.attempts.Load(), jobs)
	}
	if live := mem.live(); len(live) != 1 || live[0].Attempts != 1 {
		t.Fatalf("journal holds %+v", live)
	}
	d1.Close() // the crash: d1's timer fires into a closed dispatcher

	second := &fakeEndpoint{isRemote: true}
	mem2 := &memJournal{}
	d2 := journaledDispatcher(clk, second, mem2)
	bound := 0
	d2.Restore(jobs, func(s *Subscriber) bool { bound++; return true })
	if got := dump(t, d2); len(got) != 1 || bound != 1 {
		t.Fatalf("restored but not resumed: dump %+v, %d bound", got, bound)
	}
	d2.Resume()
	if recs := d2.Records(Query{}); len(recs) != 1 || recs[0].Status != StatusRetrying || recs[0].AttemptCount != 1 ||
		!recs[0].NextAttempt.Equal(start.Add(20*time.Second)) {
		t.Fatalf("restored record %+v", recs)
	}
	clk.Advance(19 * time.Second)
	settle(t, d2)
	if n := second.attempts.Load(); n != 0 {
		t.Fatalf("%d attempts before the retry was due", n)
	}
	clk.Advance(time.Second)
	settle(t, d2)
	if n := second.attempts.Load(); n != 1 {
		t.Fatalf("%d attempts when the retry fell due, want 1", n)
	}
	if live := mem2.live(); len(live) != 1 || live[0].Attempts != 2 || !live[0].Due.Equal(start.Add(40*time.Second)) {
		t.Fatalf("journal after the second attempt: %+v", live)
	}
	clk.Advance(40 * time.Second)
	settle(t, d2)
	recs := d2.Records(Query{})
	if n := second.attempts.Load(); n != 3 || len(recs) != 1 || recs[0].Status != StatusDropped || recs[0].AttemptCount != 4 {
		t.Fatalf("%d attempts after the restart (want the policy's 3 remaining); record %+v", n, recs)
	}
	if live := mem2.live(); len(live) != 0 || len(dump(t, d2)) != 0 {
		t.Fatalf("a dropped job is still journaled: %+v", live)
	}
}

// A job not yet attempted resumes at once; one whose subscription is gone
// is dropped, its record deleted; a confirmation message of a gone
// subscription still goes out.
func TestRestoredJobsOfGoneSubscriptions(t *testing.T) {
	t.Parallel()
	start := time.Unix(1700000000, 0)
	clk := clock.NewManual(start)
	ep := &fakeEndpoint{isRemote: true}
	ep.ok.Store(true)
	mem := &memJournal{}
	d := journaledDispatcher(clk, ep, mem)
	topic := "arn:aws:sns:us-east-1:1:t"
	pol := retrypolicy.Default("http")
	jobs := []JobState{
		{ID: 7, TopicArn: topic, Message: &Message{ID: "live", TopicArn: topic}, SubscriptionArn: topic + ":a", Protocol: "fake", Policy: pol, Due: start},
		{ID: 3, TopicArn: topic, Message: &Message{ID: "gone", TopicArn: topic}, SubscriptionArn: topic + ":b", Protocol: "fake", Policy: pol, Due: start},
		{ID: 5, TopicArn: topic, Control: &Control{Type: TypeUnsubscribeConfirmation, ID: "bye", TopicArn: topic}, SubscriptionArn: topic + ":b", Protocol: "fake", Policy: pol, Due: start},
	}
	for _, st := range jobs {
		mem.Record(Change{Jobs: []JobState{st}})
	}
	d.Restore(jobs, func(s *Subscriber) bool { return s.Arn == topic+":a" })
	d.Resume()
	settle(t, d)
	if n := ep.attempts.Load(); n != 2 {
		t.Fatalf("%d attempts, want the live notification and the confirmation", n)
	}
	if live := mem.live(); len(live) != 0 {
		t.Fatalf("journal still holds %+v", live)
	}
	// New jobs are numbered past the restored ones.
	if err := d.Deliver(&Message{ID: "next", TopicArn: topic}, Subscriber{Arn: topic + ":a", Protocol: "fake", Policy: &pol}); err != nil {
		t.Fatal(err)
	}
	if id := d.jobIDs.Load(); id != 8 {
		t.Fatalf("next job id %d, want 8", id)
	}
}

// Without a journal nothing is recorded or dumped.
func TestNoJournalNoJobIDs(t *testing.T) {
	t.Parallel()
	ep := &fakeEndpoint{isRemote: true}
	d := fakeDispatcher(clock.NewManual(time.Unix(0, 0)), ep, 0)
	_ = d.Deliver(&Message{ID: "m", TopicArn: topicArn}, Subscriber{Arn: "s", Protocol: "fake", Policy: httpPolicy()})
	settle(t, d)
	if got := dump(t, d); len(got) != 0 || d.jobIDs.Load() != 0 {
		t.Fatalf("dumped %+v without a journal", got)
	}
}

// checkingQueue is a dead-letter queue that notes whether the journal still
// held the job when the message came.
type checkingQueue struct {
	mem        *memJournal
	jobsAtSend int
	sent       int
}

func (q *checkingQueue) Fifo() bool              { return false }
func (q *checkingQueue) Policy() (string, error) { return "", nil }
func (q *checkingQueue) Send(QueueMessage) error {
	q.jobsAtSend = len(q.mem.live())
	q.sent++
	return nil
}

type oneQueue struct{ q Queue }

func (o oneQueue) Queue(string) (Queue, error) { return o.q, nil }

// A job given up is sent to its dead-letter queue before its end is
// recorded: a crash between the two redelivers it, never loses it.
func TestADeadLetteredJobEndsAfterItsDLQSend(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(1700000000, 0))
	mem := &memJournal{}
	dlq := &checkingQueue{mem: mem}
	d := New(Options{Clock: clk, Signer: &fakeSigner{}, Journal: mem, Queues: oneQueue{dlq}, Links: Links{
		Base: func() string { return "http://localhost" }, CertFile: func() (string, error) { return "c.pem", nil },
	}})
	ep := &fakeEndpoint{isRemote: true}
	d.endpoints["fake"] = ep
	pol := retrypolicy.Default("http")
	pol.Retry.NumRetries = 0 // one attempt, then the DLQ
	topic := "arn:aws:sns:us-east-1:1:t"
	err := d.Deliver(&Message{ID: "m", TopicArn: topic, Body: "x"},
		Subscriber{Arn: topic + ":s", Protocol: "fake", Policy: &pol, DeadLetterArn: "arn:aws:sqs:us-east-1:1:dlq"})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, d)
	if dlq.sent != 1 || dlq.jobsAtSend != 1 || len(mem.live()) != 0 {
		t.Fatalf("%d sent to the DLQ, %d jobs journaled at the send (want 1), %d after", dlq.sent, dlq.jobsAtSend, len(mem.live()))
	}
	if r := d.Records(Query{}); len(r) != 1 || r[0].Status != StatusDeadLettered {
		t.Fatalf("records %+v", r)
	}
}
