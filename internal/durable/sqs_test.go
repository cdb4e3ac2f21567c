package durable_test

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/sqs"
)

// sqsNode is one life of an SQS engine on a data dir.
type sqsNode struct {
	log    *oplog.Log
	engine *sqs.Engine
}

func bootSQS(t *testing.T, dir string, clk clock.Clock) *sqsNode {
	t.Helper()
	n := &sqsNode{}
	got := durable.NewRecovered()
	var err error
	n.log, _, err = oplog.Open(dir, oplog.Options{
		Snapshot:     func(emit func(k, v []byte) error) error { return durable.EmitSQS(n.engine, ns, emit) },
		Logf:         t.Logf,
		LoaderCopies: true, // as fanout opens it
	}, got.Load)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.log.Close() })
	n.engine = sqs.New(sqs.Options{Clock: clk, Journal: durable.SQSJournal(n.log, ns)})
	t.Cleanup(n.engine.Close)
	if err := got.SQS(ns).Into(n.engine); err != nil {
		t.Fatal(err)
	}
	return n
}

// sqsView is what a client can see of every queue without changing it.
type sqsView map[string][]sqs.PeekedMessage

func viewSQS(t *testing.T, e *sqs.Engine) (sqsView, map[string][]sqs.Attribute) {
	t.Helper()
	v, attrs := sqsView{}, map[string][]sqs.Attribute{}
	for _, name := range e.ListQueues("") {
		q, err := e.Queue(name)
		if err != nil {
			t.Fatal(err)
		}
		// Attributes first: it moves what the clock made visible where a
		// receive finds it, which Peek does not (it lists such messages
		// after the others).
		if attrs[name], err = q.Attributes([]string{sqs.AttrAll}); err != nil {
			t.Fatal(err)
		}
		p, err := q.Peek(sqs.PeekOptions{Limit: sqs.MaxPeekLimit})
		if err != nil {
			t.Fatal(err)
		}
		v[name] = p.Messages
	}
	return v, attrs
}

// Senders, receivers, deleters, visibility changers, dead-letter moves and
// queue deletions run while the log compacts itself again and again (each
// compaction reads the queues page by page, between their changes): what
// the dir holds afterwards restores to what memory shows.
func TestConcurrentSQSChangesDuringCompactions(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	a := bootSQS(t, t.TempDir(), clk)
	e := a.engine
	dlq, err := e.CreateQueue("dlq", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	redrive := map[string]string{sqs.AttrRedrivePolicy: fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":1}`, dlq.Arn())}
	var queues []*sqs.Queue
	for k := range 3 {
		q, err := e.CreateQueue(fmt.Sprint("q", k), redrive, nil)
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	fifo, err := e.CreateQueue("f.fifo", map[string]string{sqs.AttrFifoQueue: "true", sqs.AttrContentBasedDeduplication: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopCompacting := compactAgainAndAgain(t, a.log)
	ctx := context.Background()
	zero, ten, one := 0, 10, 1
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := queues[w%len(queues)]
			for i := range 300 {
				body := fmt.Sprintf("w%d-%d", w, i)
				if _, err := q.Send(sqs.SendInput{Body: body}); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					entries := []sqs.SendBatchEntry{{ID: "a", SendInput: sqs.SendInput{Body: body + "a"}}, {ID: "b", SendInput: sqs.SendInput{Body: body + "b", DelaySeconds: &ten}}}
					if _, _, err := q.SendBatch(entries); err != nil {
						t.Error(err)
						return
					}
				}
				if _, err := fifo.Send(sqs.SendInput{Body: body, GroupID: fmt.Sprint("g", i%3)}); err != nil {
					t.Error(err)
					return
				}
				got, err := q.Receive(ctx, sqs.ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero, VisibilityTimeout: &one})
				if err != nil {
					t.Error(err)
					return
				}
				var handles []string
				for k, m := range got {
					switch k % 3 {
					case 0:
						handles = append(handles, m.ReceiptHandle)
					case 1:
						_ = q.ChangeVisibility(m.ReceiptHandle, 0) // received again soon: some reach the DLQ
						// and the others stay in flight for their second
					}
				}
				if errs, err := q.DeleteBatch(handles); err != nil {
					t.Error(err)
				} else {
					for _, err := range errs {
						if err != nil {
							t.Error(err)
						}
					}
				}
				if f, err := fifo.Receive(ctx, sqs.ReceiveInput{MaxNumberOfMessages: &one, WaitTimeSeconds: &zero}); err == nil && len(f) == 1 && i%2 == 0 {
					_ = fifo.Delete(f[0].ReceiptHandle)
				}
				if w == 0 && i%50 == 49 {
					name := fmt.Sprint("tmp", i)
					if _, err := e.CreateQueue(name, nil, nil); err != nil {
						t.Error(err)
					} else if i%100 == 49 {
						_ = e.DeleteQueue(name)
					}
				}
			}
		}()
	}
	wg.Wait()
	stopCompacting()
	clk.Advance(2 * time.Second)
	wantMsgs, wantAttrs := viewSQS(t, e)
	b := bootSQS(t, crashSQS(t, a), clk)
	gotMsgs, gotAttrs := viewSQS(t, b.engine)
	if !reflect.DeepEqual(gotAttrs, wantAttrs) {
		t.Errorf("queue attributes after recovery:\n%v\nwant\n%v", gotAttrs, wantAttrs)
	}
	for name, want := range wantMsgs {
		if got := gotMsgs[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("queue %s after recovery: %d messages, want %d", name, len(got), len(want))
			for k := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("first difference, message %d:\n%+v\nwant\n%+v", k, got[k], want[k])
					break
				}
			}
		}
	}
	if n := len(wantMsgs["dlq"]); n == 0 {
		t.Error("nothing was dead-lettered: the test did not exercise the moves")
	}
}

// crashSQS copies a live node's data dir as it is on disk.
func crashSQS(t *testing.T, n *sqsNode) string {
	t.Helper()
	return crash(t, &node{dir: n.log.Dir()}, 0)
}

// compactAgainAndAgain compacts log back to back until the returned
// function is called, which returns once the last compaction ended.
func compactAgainAndAgain(t *testing.T, log *oplog.Log) (stop func()) {
	done := make(chan struct{})
	var compactions sync.WaitGroup
	compactions.Add(1)
	go func() {
		defer compactions.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := log.Compact(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	return func() {
		close(done)
		compactions.Wait()
	}
}

// nullStore takes every batch at once and keeps nothing: what the SQS
// journal costs a send before the disk.
type nullStore struct{}

type done struct{}

func (done) Wait() error                                   { return nil }
func (nullStore) Enqueue([]persist.Record) persist.Pending { return done{} }
func (nullStore) Commit([]persist.Record) error            { return nil }
func (nullStore) Close() error                             { return nil }

// BenchmarkSQSJournal: a send, a receive and a delete of a 1 KiB message,
// in memory and with the journal encoding them for a store that takes them
// at once.
func BenchmarkSQSJournal(b *testing.B) {
	body := strings.Repeat("x", 1024)
	for _, journaled := range []bool{false, true} {
		b.Run(map[bool]string{false: "memory", true: "journal"}[journaled], func(b *testing.B) {
			o := sqs.Options{}
			if journaled {
				o.Journal = durable.SQSJournal(nullStore{}, ns)
			}
			e := sqs.New(o)
			b.Cleanup(e.Close)
			q, err := e.CreateQueue("bench", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			zero, one := 0, 1
			b.ReportAllocs()
			for b.Loop() {
				if _, err := q.Send(sqs.SendInput{Body: body}); err != nil {
					b.Fatal(err)
				}
				got, err := q.Receive(context.Background(), sqs.ReceiveInput{MaxNumberOfMessages: &one, WaitTimeSeconds: &zero})
				if err != nil || len(got) != 1 {
					b.Fatal(err)
				}
				if err := q.Delete(got[0].ReceiptHandle); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A FIFO receive answered before a crash replays after it: retried with
// its ReceiveRequestAttemptId it returns the same messages, as long as
// they are still in flight and untouched.
func TestReceiveAttemptsReplayAfterACrash(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	a := bootSQS(t, t.TempDir(), clk)
	q, err := a.engine.CreateQueue("f.fifo", map[string]string{sqs.AttrFifoQueue: "true", sqs.AttrContentBasedDeduplication: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		if _, err := q.Send(sqs.SendInput{Body: fmt.Sprint("early", i), GroupID: fmt.Sprint("e", i%40)}); err != nil {
			t.Fatal(err)
		}
	}
	stopCompacting := compactAgainAndAgain(t, a.log)
	stopSending := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stopSending:
				return
			default:
			}
			if _, err := q.Send(sqs.SendInput{Body: fmt.Sprint("m", i), GroupID: fmt.Sprint("g", i)}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	ten, zero, vis := 10, 0, 600
	answered := map[string][]string{} // attempt -> message ids
	for k := range 200 {
		id := fmt.Sprint("attempt/", k)
		got, err := q.Receive(context.Background(), sqs.ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero,
			VisibilityTimeout: &vis, AttemptID: id, SystemAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			answered[id] = append(answered[id], m.MessageID)
		}
		if len(got) == 0 {
			runtime.Gosched() // the sender's turn
		}
	}
	// The copy is a crash image only if no file is renamed or removed
	// while it is taken, so compactions stop first; sends go on.
	stopCompacting()
	dir := crashSQS(t, a) // while the sender still sends
	close(stopSending)
	wg.Wait()
	b := bootSQS(t, dir, clk)
	rq, err := b.engine.Queue("f.fifo")
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for id, want := range answered {
		got, err := rq.Receive(context.Background(), sqs.ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero,
			VisibilityTimeout: &vis, AttemptID: id, SystemAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range got {
			ids = append(ids, m.MessageID)
		}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("retry of %s after the crash returned %v, want %v", id, ids, want)
		}
		replayed++
	}
	if replayed < 10 {
		t.Errorf("only %d receives took messages: the test did not run", replayed)
	}
}
