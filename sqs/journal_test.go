package sqs

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/clock"
)

// memJournal applies every Change to an in-memory model of a store (whole
// values per key, deletions before puts), as internal/durable's keys do:
// restoring from it checks what the engine records, not only what Dump
// writes.
type memJournal struct {
	mu       sync.Mutex
	fail     bool
	queues   map[string]QueueState
	msgs     map[MessageRef]MessageRecord
	statuses map[MessageRef]MessageStatus
	dedup    map[[2]string]DedupState
	attempts map[[2]string]AttemptState
	names    map[string]DeletedName
	tasks    map[string]MoveTaskState
	changes  int
}

func newMemJournal() *memJournal {
	j := &memJournal{}
	j.reset()
	return j
}

func (j *memJournal) reset() {
	j.queues, j.msgs, j.statuses = map[string]QueueState{}, map[MessageRef]MessageRecord{}, map[MessageRef]MessageStatus{}
	j.dedup, j.attempts = map[[2]string]DedupState{}, map[[2]string]AttemptState{}
	j.names, j.tasks = map[string]DeletedName{}, map[string]MoveTaskState{}
}

type waitErr struct{ err error }

func (w waitErr) Wait() error { return w.err }

func (j *memJournal) Record(c Change) Waiter {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail {
		return waitErr{errors.New("disk full")}
	}
	j.apply(c)
	return waitErr{}
}

func (j *memJournal) apply(c Change) {
	j.changes++
	dropMsgs := func(q string, attempts bool) {
		for r := range j.msgs {
			if r.Queue == q {
				delete(j.msgs, r)
			}
		}
		for r := range j.statuses {
			if r.Queue == q {
				delete(j.statuses, r)
			}
		}
		if attempts {
			for k := range j.attempts {
				if k[0] == q {
					delete(j.attempts, k)
				}
			}
		}
	}
	if c.Reset {
		j.reset()
	}
	for _, q := range c.DeletedQueues {
		delete(j.queues, q)
		dropMsgs(q, true)
		for k := range j.dedup {
			if k[0] == q {
				delete(j.dedup, k)
			}
		}
	}
	for _, q := range c.Purged {
		dropMsgs(q, true)
	}
	for _, r := range c.Removed {
		delete(j.msgs, r)
		delete(j.statuses, r)
	}
	for _, d := range c.ForgottenDedup {
		delete(j.dedup, [2]string{d.Queue, d.Key})
	}
	for _, n := range c.ForgottenNames {
		delete(j.names, n)
	}
	for _, q := range c.Queues {
		j.queues[q.Name] = q
	}
	for _, m := range c.Messages {
		m.MessageID, m.MD5OfBody, m.Body = strings.Clone(m.MessageID), strings.Clone(m.MD5OfBody), strings.Clone(m.Body) // views until Record returns
		j.msgs[MessageRef{m.Queue, m.Seq}] = m
		delete(j.statuses, MessageRef{m.Queue, m.Seq})
	}
	for _, s := range c.Statuses {
		j.statuses[MessageRef{s.Queue, s.Seq}] = s
	}
	for _, d := range c.Dedup {
		j.dedup[[2]string{d.Queue, d.Key}] = d
	}
	for _, a := range c.Attempts {
		j.attempts[[2]string{a.Queue, a.ID}] = a
	}
	for _, n := range c.DeletedNames {
		j.names[n.Name] = n
	}
	for _, t := range c.MoveTasks {
		j.tasks[t.Handle] = t
	}
}

// state is the model's content as a State.
func (j *memJournal) state() State {
	j.mu.Lock()
	defer j.mu.Unlock()
	var st State
	for _, q := range j.queues {
		st.Queues = append(st.Queues, q)
	}
	for _, m := range j.msgs {
		st.Messages = append(st.Messages, m)
	}
	sort.Slice(st.Messages, func(a, b int) bool { return st.Messages[a].Seq < st.Messages[b].Seq })
	for _, s := range j.statuses {
		st.Statuses = append(st.Statuses, s)
	}
	for _, d := range j.dedup {
		st.Dedup = append(st.Dedup, d)
	}
	for _, a := range j.attempts {
		st.Attempts = append(st.Attempts, a)
	}
	for _, n := range j.names {
		st.DeletedNames = append(st.DeletedNames, n)
	}
	for _, t := range j.tasks {
		st.MoveTasks = append(st.MoveTasks, t)
	}
	return st
}

// dumpState is what Dump writes, applied to a fresh model.
func dumpState(t *testing.T, e *Engine) State {
	t.Helper()
	j := newMemJournal()
	if err := e.Dump(func(c Change) error { j.apply(c); return nil }); err != nil {
		t.Fatal(err)
	}
	return j.state()
}

// observed is everything a client can see of an engine without changing it.
type observed struct {
	Queues map[string]observedQueue
	Tasks  map[string][]MoveTask
}

type observedQueue struct {
	Attributes []Attribute
	Tags       map[string]string
	Messages   []PeekedMessage
}

func observe(t *testing.T, e *Engine) observed {
	t.Helper()
	o := observed{Queues: map[string]observedQueue{}, Tasks: map[string][]MoveTask{}}
	for _, n := range e.ListQueues("") {
		q, err := e.Queue(n)
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := q.Attributes([]string{AttrAll})
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.Peek(PeekOptions{Limit: MaxPeekLimit})
		if err != nil {
			t.Fatal(err)
		}
		o.Queues[n] = observedQueue{attrs, q.Tags(), p.Messages}
		if tasks, err := e.ListMoveTasks(q.Arn(), ptr(10)); err == nil && len(tasks) > 0 {
			o.Tasks[n] = tasks
		}
	}
	return o
}

func sameObserved(t *testing.T, what string, got, want observed) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	for n, w := range want.Queues {
		g, ok := got.Queues[n]
		switch {
		case !ok:
			t.Errorf("%s: queue %s missing", what, n)
		case !reflect.DeepEqual(g.Attributes, w.Attributes):
			t.Errorf("%s: queue %s attributes\n%v\nwant\n%v", what, n, g.Attributes, w.Attributes)
		case !reflect.DeepEqual(g.Tags, w.Tags):
			t.Errorf("%s: queue %s tags %v, want %v", what, n, g.Tags, w.Tags)
		case len(g.Messages) != len(w.Messages):
			t.Errorf("%s: queue %s has %d messages, want %d", what, n, len(g.Messages), len(w.Messages))
		default:
			for k := range w.Messages {
				if !reflect.DeepEqual(g.Messages[k], w.Messages[k]) {
					t.Errorf("%s: queue %s message %d\n%+v\nwant\n%+v", what, n, k, g.Messages[k], w.Messages[k])
				}
			}
		}
	}
	if len(got.Queues) != len(want.Queues) {
		t.Errorf("%s: %d queues, want %d", what, len(got.Queues), len(want.Queues))
	}
	if !reflect.DeepEqual(got.Tasks, want.Tasks) {
		t.Errorf("%s: move tasks\n%+v\nwant\n%+v", what, got.Tasks, want.Tasks)
	}
}

// populated is an engine with queues and messages in every state.
type populated struct {
	e              *Engine
	clk            *clock.Manual
	std, fifo, dlq *Queue
	inflight       Received
	fifoDup        SendResult
	attempt        []Received
}

func fillEngine(t *testing.T, j Journal) *populated {
	t.Helper()
	clk := clock.NewManual(epoch)
	e := New(Options{Clock: clk, Journal: j})
	t.Cleanup(e.Close)
	p := &populated{e: e, clk: clk}
	p.dlq = mustQueue(t, e, "dlq", nil)
	p.std = mustQueue(t, e, "std", map[string]string{AttrVisibilityTimeout: "40"})
	if err := p.std.SetAttributes(redriveTo(p.dlq, 5)); err != nil {
		t.Fatal(err)
	}
	if err := p.std.Tag(map[string]string{"team": "a", "env": "dev"}); err != nil {
		t.Fatal(err)
	}
	if err := p.std.AddPermission("l1", []string{"111111111111"}, []string{"SendMessage"}); err != nil {
		t.Fatal(err)
	}
	p.fifo = mustQueue(t, e, "f.fifo", map[string]string{AttrFifoQueue: "true", AttrContentBasedDeduplication: "true"})
	clk.Advance(time.Second)
	// Standard: visible, delayed, in flight, received and returned, with
	// attributes, a trace header and a sender.
	for k := range 6 {
		_, err := p.std.Send(SendInput{Body: fmt.Sprintf("m%d", k), SenderID: "AIDA" + fmt.Sprint(k%2),
			Attributes:       []MessageAttribute{{Name: "n", DataType: "Number", StringValue: fmt.Sprint(k)}, {Name: "b", DataType: "Binary", BinaryValue: []byte{0, byte(k)}}},
			SystemAttributes: []MessageAttribute{{Name: "AWSTraceHeader", DataType: "String", StringValue: "Root=1-" + fmt.Sprint(k)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.std.Send(SendInput{Body: "late", DelaySeconds: ptr(300)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.std.SendBatch([]SendBatchEntry{{ID: "a", SendInput: SendInput{Body: "b1"}}, {ID: "b", SendInput: SendInput{Body: "b2", DelaySeconds: ptr(5)}}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	got := receive(t, p.std, ReceiveInput{MaxNumberOfMessages: ptr(2)})
	p.inflight = got[0]
	if err := p.std.ChangeVisibility(got[1].ReceiptHandle, 0); err != nil { // received once, visible again
		t.Fatal(err)
	}
	got = receive(t, p.std, ReceiveInput{MaxNumberOfMessages: ptr(1), VisibilityTimeout: ptr(10)})
	if err := p.std.Delete(got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	// FIFO: two groups, one locked by a message in flight, a dedup id, and a
	// receive a ReceiveRequestAttemptId replays.
	for k := range 4 {
		if _, err := p.fifo.Send(SendInput{Body: fmt.Sprintf("f%d", k), GroupID: fmt.Sprint("g", k%2)}); err != nil {
			t.Fatal(err)
		}
	}
	dup, err := p.fifo.Send(SendInput{Body: "f1", GroupID: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	p.fifoDup = dup
	p.attempt = receive(t, p.fifo, ReceiveInput{MaxNumberOfMessages: ptr(1), AttemptID: "try-1", SystemAttributeNames: []string{"All"}, MessageAttributeNames: []string{"All"}})
	// A queue deleted a moment ago: its name is not free yet.
	gone := mustQueue(t, e, "gone", nil)
	send(t, gone, "x")
	if err := e.DeleteQueue("gone"); err != nil {
		t.Fatal(err)
	}
	// A move task in progress, out of a DLQ holding a redriven message.
	src := mustQueue(t, e, "src", nil)
	mdlq := mustQueue(t, e, "mdlq", nil)
	if err := src.SetAttributes(redriveTo(mdlq, 1)); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		send(t, src, fmt.Sprint("poison", k))
	}
	receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(0)})
	if moved := receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10)}); len(moved) != 0 {
		t.Fatalf("received %d past maxReceiveCount", len(moved))
	}
	if _, err := e.StartMoveTask(mdlq.Arn(), "", ptr(1)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second) // one moved, two to go
	return p
}

// Restoring what the journal recorded, or what Dump wrote, gives an engine
// no client can tell from the original, and that behaves as it would.
func TestRestoreOfJournalAndDumpEqualsTheOriginal(t *testing.T) {
	t.Parallel()
	j := newMemJournal()
	p := fillEngine(t, j)
	want := observe(t, p.e)
	if n := len(want.Queues["std"].Messages); n != 8 {
		t.Fatalf("std holds %d messages: the test set-up changed", n)
	}
	for _, from := range []string{"journal", "dump"} {
		t.Run(from, func(t *testing.T) {
			st := j.state()
			if from == "dump" {
				st = dumpState(t, p.e)
			}
			clk := clock.NewManual(p.clk.Now())
			e := New(Options{Clock: clk})
			t.Cleanup(e.Close)
			if err := e.Restore(st); err != nil {
				t.Fatal(err)
			}
			sameObserved(t, "restored from the "+from, observe(t, e), want)
			checkBehaviour(t, p, e, clk)
		})
	}
	// And the original passes the same checks.
	checkBehaviour(t, p, p.e, p.clk)
}

// checkBehaviour checks that restored engine e answers as p's would.
func checkBehaviour(t *testing.T, p *populated, e *Engine, clk *clock.Manual) {
	t.Helper()
	std, _ := e.Queue("std")
	fifo, _ := e.Queue("f.fifo")
	// The handle of a message in flight still deletes it.
	if err := std.ChangeVisibility(p.inflight.ReceiptHandle, 100); err != nil {
		t.Errorf("ChangeVisibility with a handle from before: %v", err)
	}
	before := len(observe(t, e).Queues["std"].Messages)
	if err := std.Delete(p.inflight.ReceiptHandle); err != nil {
		t.Errorf("Delete with a handle from before: %v", err)
	}
	if after := len(observe(t, e).Queues["std"].Messages); after != before-1 {
		t.Errorf("the delete left %d messages of %d", after, before)
	}
	// A duplicate is still one; the attempt still replays.
	if r, err := fifo.Send(SendInput{Body: "f1", GroupID: "g1"}); err != nil || r.MessageID != p.fifoDup.MessageID || r.SequenceNumber != p.fifoDup.SequenceNumber {
		t.Errorf("duplicate after restore: %+v %v, want %+v", r, err, p.fifoDup)
	}
	again := receive(t, fifo, ReceiveInput{MaxNumberOfMessages: ptr(1), AttemptID: "try-1", SystemAttributeNames: []string{"All"}, MessageAttributeNames: []string{"All"}})
	if !reflect.DeepEqual(again, p.attempt) {
		t.Errorf("replayed receive\n%+v\nwant\n%+v", again, p.attempt)
	}
	// New FIFO sends number after the old ones.
	r, err := fifo.Send(SendInput{Body: "new", GroupID: "g9"})
	if err != nil || r.SequenceNumber <= p.fifoDup.SequenceNumber {
		t.Errorf("SequenceNumber after restore %q (%v), want above %q", r.SequenceNumber, err, p.fifoDup.SequenceNumber)
	}
	// The deleted name is still taken; the move task resumes.
	if _, err := e.CreateQueue("gone", nil, nil); !isKind(err, ErrQueueDeletedRecently.Code) {
		t.Errorf("CreateQueue of a name deleted before the restart: %v", err)
	}
	clk.Advance(3 * time.Second)
	mdlq, _ := e.Queue("mdlq")
	src, _ := e.Queue("src")
	if n := len(observe(t, e).Queues["mdlq"].Messages); n != 0 {
		t.Errorf("the move task left %d in its DLQ", n)
	}
	if got := receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10)}); len(got) != 3 {
		t.Errorf("%d messages back in the source, want 3", len(got))
	}
	tasks, _ := e.ListMoveTasks(mdlq.Arn(), nil)
	if len(tasks) != 1 || tasks[0].Status != TaskCompleted || tasks[0].Moved != 3 {
		t.Errorf("move task after resuming: %+v", tasks)
	}
	// Delayed messages appear when due.
	clk.Advance(300 * time.Second)
	var bodies []string
	for _, m := range receive(t, std, ReceiveInput{MaxNumberOfMessages: ptr(10)}) {
		bodies = append(bodies, m.Body)
	}
	sort.Strings(bodies)
	if fmt.Sprint(bodies) != "[b1 b2 late m2 m3 m4 m5]" {
		t.Errorf("received after the delays ended: %v", bodies)
	}
}

func isKind(err error, code string) bool {
	var ae *awserr.Error
	return errors.As(err, &ae) && ae.Code == code
}

// A change the store refuses answers InternalFailure (500). A send is
// taken back (its FIFO deduplication id too, so a retry is not answered as
// a duplicate of a message that may not be stored); a delete stays done in
// memory, and its retry is recorded again, so that its 200 means stored.
func TestRefusedChangesAnswer500(t *testing.T) {
	t.Parallel()
	j := newMemJournal()
	clk := clock.NewManual(epoch)
	e := New(Options{Clock: clk, Journal: j})
	t.Cleanup(e.Close)
	std := mustQueue(t, e, "std", nil)
	fifo := mustQueue(t, e, "f.fifo", map[string]string{AttrFifoQueue: "true"})
	dlq := mustQueue(t, e, "dlq", nil)
	if err := mustQueue(t, e, "src", nil).SetAttributes(redriveTo(dlq, 1)); err != nil {
		t.Fatal(err)
	}
	refuse := func(on bool) { j.mu.Lock(); j.fail = on; j.mu.Unlock() }
	internal := func(what string, err error) {
		t.Helper()
		if !isKind(err, ErrInternal.Code) {
			t.Errorf("%s while the store refuses: %v, want %s", what, err, ErrInternal.Code)
		}
	}

	refuse(true)
	_, err := std.Send(SendInput{Body: "lost"})
	internal("Send", err)
	_, _, err = std.SendBatch([]SendBatchEntry{{ID: "a", SendInput: SendInput{Body: "x"}}, {ID: "b", SendInput: SendInput{Body: "y", DelaySeconds: ptr(9)}}})
	internal("SendBatch", err)
	_, err = fifo.Send(SendInput{Body: "f", GroupID: "g", DeduplicationID: "d"})
	internal("FIFO Send", err)
	internal("TagQueue", std.Tag(map[string]string{"k": "v"}))
	_, err = e.StartMoveTask(dlq.Arn(), "", nil)
	internal("StartMessageMoveTask", err)
	_, err = e.CreateQueue("new", nil, nil)
	internal("CreateQueue", err)
	refuse(false)
	if p, _ := std.Peek(PeekOptions{}); len(p.Messages) != 0 {
		t.Errorf("refused sends left %d messages", len(p.Messages))
	}
	if tags := std.Tags(); len(tags) != 0 {
		t.Errorf("a refused TagQueue left tags %v", tags)
	}
	if _, err := e.Queue("new"); err == nil {
		t.Error("a refused CreateQueue left its queue")
	}
	if tasks, _ := e.ListMoveTasks(dlq.Arn(), nil); len(tasks) != 0 {
		t.Errorf("a refused StartMessageMoveTask left %+v", tasks)
	}
	first := sendFifo(t, fifo, "g", "d", "f")
	if p, _ := fifo.Peek(PeekOptions{}); len(p.Messages) != 1 || p.Messages[0].MessageID != first.MessageID {
		t.Errorf("the retry of a refused FIFO send was not stored as new: %+v", p.Messages)
	}

	send(t, std, "kept")
	got := receive(t, std, ReceiveInput{})
	refuse(true)
	internal("DeleteMessage", std.Delete(got[0].ReceiptHandle))
	refuse(false)
	if err := std.Delete(got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if st := j.state(); len(st.Messages) != 1 || st.Messages[0].Body != "f" {
		t.Errorf("stored after the delete's retry: %+v", st.Messages)
	}
	// What the journal holds now restores to what memory shows.
	r := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(r.Close)
	if err := r.Restore(j.state()); err != nil {
		t.Fatal(err)
	}
	sameObserved(t, "after refused changes", observe(t, r), observe(t, e))
}

// A queue larger than a Dump page, with holes, dumps and restores to the
// same messages in the same order.
func TestDumpOfALargeQueueKeepsOrder(t *testing.T) {
	t.Parallel()
	e, clk := newTestEngine(t)
	q := mustQueue(t, e, "big", nil)
	for k := range 3*dumpPage + 7 {
		send(t, q, fmt.Sprint("m", k))
	}
	for k := 0; k < dumpPage; k++ {
		got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(1)})
		if k%3 == 0 {
			if err := q.Delete(got[0].ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(r.Close)
	if err := r.Restore(dumpState(t, e)); err != nil {
		t.Fatal(err)
	}
	restored, _ := r.Queue("big")
	clk.Advance(time.Minute)
	r.Clock().(*clock.Manual).Advance(time.Minute)
	drain := func(q *Queue) (out []string) {
		for {
			got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10), SystemAttributeNames: []string{SysApproximateReceiveCount}})
			if len(got) == 0 {
				return out
			}
			for _, m := range got {
				out = append(out, m.Body+"/"+m.Attributes[0].Value)
				if err := q.Delete(m.ReceiptHandle); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	want, got := drain(q), drain(restored)
	if len(want) != 3*dumpPage+7-(dumpPage+2)/3 || !reflect.DeepEqual(got, want) {
		t.Errorf("restored queue drained %d messages, the original %d; first %v vs %v", len(got), len(want), got[:3], want[:3])
	}
}

// A Restorer takes keys in any order: messages out of seq order, a message
// stored twice, a status before its message, a queue's state last.
func TestRestorerTakesAnyOrder(t *testing.T) {
	t.Parallel()
	e, clk := newTestEngine(t)
	q := mustQueue(t, e, "q", nil)
	for k := range 50 {
		send(t, q, fmt.Sprint("m", k))
	}
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(3), VisibilityTimeout: ptr(100)})
	st := dumpState(t, e)
	var statuses []MessageStatus
	for _, m := range st.Messages {
		if m.Status.ReceiveCount > 0 {
			statuses = append(statuses, m.Status)
			m.Status = MessageStatus{Queue: m.Queue, Seq: m.Seq, Order: m.Seq, VisibleAt: m.SentAt} // as sent
		}
	}
	r := NewRestorer()
	for _, s := range statuses[:1] {
		r.Status(s) // before its message
	}
	msgs := st.Messages
	for k := len(msgs) - 1; k >= 0; k -= 2 {
		if err := r.Message(msgs[k]); err != nil {
			t.Fatal(err)
		}
	}
	for k := len(msgs) - 2; k >= 0; k -= 2 {
		if err := r.Message(msgs[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Message(msgs[7]); err != nil { // again
		t.Fatal(err)
	}
	for _, s := range statuses[1:] {
		r.Status(s)
	}
	r.Queue(st.Queues[0])
	restored := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(restored.Close)
	if err := r.Into(restored); err != nil {
		t.Fatal(err)
	}
	sameObserved(t, "restored in any order", observe(t, restored), observe(t, e))
	rq, _ := restored.Queue("q")
	if err := rq.Delete(got[2].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
}

// SendDeferred queues at once and leaves the wait for the store to its
// caller: a refused record answers InternalFailure and takes the send back.
func TestSendDeferred(t *testing.T) {
	t.Parallel()
	j := newMemJournal()
	e := New(Options{Clock: clock.NewManual(epoch), Journal: j})
	t.Cleanup(e.Close)
	a, b := mustQueue(t, e, "a", nil), mustQueue(t, e, "b", nil)
	var waits []Waiter
	for _, q := range []*Queue{a, b} {
		_, w, err := q.SendDeferred(SendInput{Body: "fan"})
		if err != nil || w == nil {
			t.Fatalf("SendDeferred: %v %v", w, err)
		}
		waits = append(waits, w)
	}
	if err := waitAll(waits...); err != nil {
		t.Fatal(err)
	}
	if st := j.state(); len(st.Messages) != 2 {
		t.Errorf("stored %d messages, want 2", len(st.Messages))
	}
	j.mu.Lock()
	j.fail = true
	j.mu.Unlock()
	_, w, err := a.SendDeferred(SendInput{Body: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); !isKind(err, ErrInternal.Code) {
		t.Errorf("Wait of a refused record: %v", err)
	}
	if p, _ := a.Peek(PeekOptions{}); len(p.Messages) != 1 {
		t.Errorf("a refused deferred send left %d messages, want 1", len(p.Messages))
	}
	plain := New(Options{})
	t.Cleanup(plain.Close)
	if _, w, err := mustQueue(t, plain, "p", nil).SendDeferred(SendInput{Body: "x"}); err != nil || w != nil {
		t.Errorf("without a journal: %v %v, want no Waiter", w, err)
	}
}
