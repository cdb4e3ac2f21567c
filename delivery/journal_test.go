package delivery

import (
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/retrypolicy"
)

// memJournal keeps what a store would: the last state of each live job
// and the messages they name. It notes every change after which a job
// names a message it does not hold.
type memJournal struct {
	mu       sync.Mutex
	jobs     map[uint64]JobState
	msgs     map[uint64]*Message
	puts     int
	msgPuts  int
	dangling []JobState
}

type doneWaiter struct{}

func (doneWaiter) Wait() error { return nil }

func (m *memJournal) Record(c Change) Waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs == nil || c.Reset {
		m.jobs, m.msgs = map[uint64]JobState{}, map[uint64]*Message{}
	}
	for _, st := range c.Ended {
		delete(m.jobs, st.ID)
	}
	for _, ms := range c.Forgotten {
		delete(m.msgs, ms.Ref)
	}
	for _, ms := range c.Messages {
		m.msgs[ms.Ref] = ms.Message
		m.msgPuts++
	}
	for _, st := range c.Jobs {
		m.jobs[st.ID] = st
		m.puts++
	}
	for _, st := range m.jobs {
		if st.MessageRef != 0 && m.msgs[st.MessageRef] == nil {
			m.dangling = append(m.dangling, st)
		}
	}
	return doneWaiter{}
}

// messages returns how many messages the journal holds and the jobs that
// ever named one it did not hold.
func (m *memJournal) messages() (int, []JobState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.msgs), append([]JobState(nil), m.dangling...)
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
	jobs, _ := dumpAll(t, d)
	return jobs
}

// dumpAll is what Dump emits: the jobs, with the Message each MessageRef
// names (as a store hands them back), and the messages.
func dumpAll(t *testing.T, d *Dispatcher) ([]JobState, []MessageState) {
	t.Helper()
	var jobs []JobState
	var msgs []MessageState
	if err := d.Dump(func(c Change) error {
		jobs = append(jobs, c.Jobs...)
		msgs = append(msgs, c.Messages...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return jobs, msgs
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

// bySubscription is an endpoint that fails the subscriptions it names.
type bySubscription struct {
	mu       sync.Mutex
	failing  map[string]bool
	attempts map[string]int
	bodies   map[string][]*Message
}

func (b *bySubscription) remote(*Dispatcher) bool { return true }

func (b *bySubscription) attempt(_ *Dispatcher, j *job) result {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attempts[j.sub.Arn]++
	b.bodies[j.sub.Arn] = append(b.bodies[j.sub.Arn], j.msg)
	if b.failing[j.sub.Arn] {
		return serverErr("down")
	}
	return ok()
}

// A message fanned out to several remote subscriptions is journaled once,
// with its first job, and forgotten with its last job's end; Dump emits it
// once; restored jobs of one message share one *Message, and the message
// is forgotten when the last of them ends.
func TestAMessageIsJournaledOnceForItsJobs(t *testing.T) {
	t.Parallel()
	start := time.Unix(1700000000, 0)
	clk := clock.NewManual(start)
	topic := "arn:aws:sns:us-east-1:1:t"
	ep := &bySubscription{failing: map[string]bool{topic + ":b": true, topic + ":c": true},
		attempts: map[string]int{}, bodies: map[string][]*Message{}}
	mem := &memJournal{}
	d1 := journaledDispatcher(clk, ep, mem)
	pol := retrypolicy.Default("http")
	var subs []Subscriber
	for _, name := range []string{"a", "b", "c"} {
		subs = append(subs, Subscriber{Arn: topic + ":" + name, Protocol: "fake", Policy: &pol})
	}
	publish := func(d *Dispatcher, m *Message) {
		f := d.Fan(m)
		for _, s := range subs {
			w, err := f.Deliver(s)
			if err != nil || w.Wait() != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	m1 := &Message{ID: "m1", TopicArn: topic, Body: "one", Timestamp: start}
	m2 := &Message{ID: "m2", TopicArn: topic, Body: "two", Timestamp: start}
	publish(d1, m1)
	publish(d1, m2)
	settle(t, d1)
	if n, dangling := mem.messages(); n != 2 || mem.msgPuts != 2 || len(dangling) != 0 {
		t.Fatalf("journal holds %d messages after %d puts (want 2 and 2), dangling jobs %+v", n, mem.msgPuts, dangling)
	}
	jobs, msgs := dumpAll(t, d1)
	if len(jobs) != 4 || len(msgs) != 2 {
		t.Fatalf("dumped %d jobs and %d messages, want 4 (b and c of each) and 2", len(jobs), len(msgs))
	}
	// What a store hands back: a copy of each message, set in each of its
	// jobs.
	byRef := map[uint64]*Message{}
	for _, ms := range msgs {
		byRef[ms.Ref] = ms.Message
	}
	for i := range jobs {
		m := byRef[jobs[i].MessageRef]
		if jobs[i].MessageRef == 0 || m == nil {
			t.Fatalf("job %+v names no message dumped", jobs[i])
		}
		// Each job its own copy: Restore shares them again.
		jobs[i].Message = &Message{ID: m.ID, TopicArn: m.TopicArn, Body: m.Body, Timestamp: m.Timestamp}
	}
	d1.Close()

	mem2 := &memJournal{}
	for _, ms := range msgs {
		mem2.Record(Change{Messages: []MessageState{ms}})
	}
	mem2.Record(Change{Jobs: jobs})
	ep.failing[topic+":c"] = false
	d2 := journaledDispatcher(clk, ep, mem2)
	d2.Restore(jobs, nil)
	d2.Resume()
	shared := map[string]*Message{}
	for _, st := range dump(t, d2) {
		if p, ok := shared[st.Message.ID]; ok && p != st.Message {
			t.Fatalf("restored jobs of %s hold two copies of it", st.Message.ID)
		}
		shared[st.Message.ID] = st.Message
	}
	clk.Advance(20 * time.Second) // c succeeds, b fails again
	settle(t, d2)
	if n, dangling := mem2.messages(); n != 2 || len(dangling) != 0 || len(mem2.live()) != 2 {
		t.Fatalf("after c's retry: %d messages (want 2, for b's jobs), %d jobs, dangling %+v", n, len(mem2.live()), dangling)
	}
	ep.mu.Lock()
	got := ep.bodies[topic+":c"]
	ep.mu.Unlock()
	if len(got) != 4 || got[2].Body != "one" && got[2].Body != "two" || got[2].Body == got[3].Body {
		t.Fatalf("c was sent %+v", got)
	}
	clk.Advance(40 * time.Second) // b's last attempts
	settle(t, d2)
	if n, dangling := mem2.messages(); n != 0 || len(dangling) != 0 || len(mem2.live()) != 0 {
		t.Fatalf("after every job ended: %d messages, %d jobs, dangling %+v", n, len(mem2.live()), dangling)
	}
	if _, msgs := dumpAll(t, d2); len(msgs) != 0 {
		t.Fatalf("dumped %d messages with no job left", len(msgs))
	}
}

// A fan keeps its message journaled until it closes, so that a first
// delivery that ends before the next job starts does not make the next one
// write the message again; Reset forgets the messages with the jobs.
func TestAFanPinsItsMessageUntilClose(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(1700000000, 0))
	topic := "arn:aws:sns:us-east-1:1:t"
	ep := &bySubscription{failing: map[string]bool{topic + ":b": true}, attempts: map[string]int{}, bodies: map[string][]*Message{}}
	mem := &memJournal{}
	d := journaledDispatcher(clk, ep, mem)
	pol := retrypolicy.Default("http")
	m := &Message{ID: "m", TopicArn: topic, Body: "x"}
	f := d.Fan(m)
	if _, err := f.Deliver(Subscriber{Arn: topic + ":a", Protocol: "fake", Policy: &pol}); err != nil {
		t.Fatal(err)
	}
	settle(t, d) // a is delivered: its job ended
	if n, _ := mem.messages(); n != 1 || len(mem.live()) != 0 {
		t.Fatalf("with the fan open: %d messages, %d jobs", n, len(mem.live()))
	}
	if _, err := f.Deliver(Subscriber{Arn: topic + ":b", Protocol: "fake", Policy: &pol}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	settle(t, d)
	if n, dangling := mem.messages(); n != 1 || mem.msgPuts != 1 || len(dangling) != 0 || len(mem.live()) != 1 {
		t.Fatalf("after the fan: %d messages from %d puts (want 1 and 1), %d jobs, dangling %+v", n, mem.msgPuts, len(mem.live()), dangling)
	}
	d.Reset()
	if n, _ := mem.messages(); n != 0 || len(mem.live()) != 0 {
		t.Fatalf("after Reset: %d messages, %d jobs", n, len(mem.live()))
	}
	if _, msgs := dumpAll(t, d); len(msgs) != 0 {
		t.Fatalf("dumped %d messages after Reset", len(msgs))
	}
	// A fan closing after nothing of it was journaled records nothing.
	f = d.Fan(&Message{ID: "q", TopicArn: topic})
	f.Close()
	if n, _ := mem.messages(); n != 0 || mem.msgPuts != 1 {
		t.Fatalf("an empty fan: %d messages, %d puts", n, mem.msgPuts)
	}
}

// Restored jobs of one message, one of them for a subscription gone since:
// that one ends at once and the message stays for the other, until it ends.
func TestARestoredMessageOutlivesItsGoneSubscriptionsJob(t *testing.T) {
	t.Parallel()
	start := time.Unix(1700000000, 0)
	clk := clock.NewManual(start)
	topic := "arn:aws:sns:us-east-1:1:t"
	ep := &bySubscription{failing: map[string]bool{}, attempts: map[string]int{}, bodies: map[string][]*Message{}}
	mem := &memJournal{}
	d := journaledDispatcher(clk, ep, mem)
	pol := retrypolicy.Default("http")
	m := &Message{ID: "m", TopicArn: topic, Body: "x"}
	jobs := []JobState{
		{ID: 1, TopicArn: topic, Message: m, MessageRef: 5, SubscriptionArn: topic + ":live", Protocol: "fake", Policy: pol, Attempts: 1, Due: start.Add(20 * time.Second)},
		{ID: 2, TopicArn: topic, Message: m, MessageRef: 5, SubscriptionArn: topic + ":gone", Protocol: "fake", Policy: pol, Attempts: 1, Due: start.Add(20 * time.Second)},
	}
	mem.Record(Change{Messages: []MessageState{{Ref: 5, Message: m}}, Jobs: jobs})
	d.Restore(jobs, func(s *Subscriber) bool { return s.Arn == topic+":live" })
	d.Resume()
	if n, dangling := mem.messages(); n != 1 || len(mem.live()) != 1 || len(dangling) != 0 {
		t.Fatalf("after the restore: %d messages, %d jobs, dangling %+v", n, len(mem.live()), dangling)
	}
	clk.Advance(20 * time.Second)
	settle(t, d)
	if n, dangling := mem.messages(); n != 0 || len(mem.live()) != 0 || len(dangling) != 0 || ep.attempts[topic+":live"] != 1 {
		t.Fatalf("after the live job delivered: %d messages, %d jobs, dangling %+v, attempts %v", n, len(mem.live()), dangling, ep.attempts)
	}
	// New messages are numbered past the restored ones.
	f := d.Fan(&Message{ID: "next", TopicArn: topic})
	if _, err := f.Deliver(Subscriber{Arn: topic + ":live", Protocol: "fake", Policy: &pol}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if ref := d.journal.refs.Load(); ref != 6 {
		t.Fatalf("next message ref %d, want 6", ref)
	}
}
