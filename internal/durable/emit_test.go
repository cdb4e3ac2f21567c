package durable_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/sqs"
)

// A snapshot taken by EmitSQS while sends, receives and deletes go on
// restores to a consistent state: every message whole, as it was sent, once;
// every one that lived through the whole snapshot present; none deleted
// before it began. The backlogs span several pages, so that changes land
// between the holds of a queue's lock.
func TestASnapshotDuringChangesRestoresWholeMessages(t *testing.T) {
	t.Parallel()
	e := sqs.New(sqs.Options{})
	t.Cleanup(e.Close)
	const phaseBefore, phaseDuring, phaseAfter = 0, 1, 2
	var phase atomic.Int32
	type sent struct {
		body, attr string
		sentIn     int32 // the phase the send had answered in
		// The phases the delete began and answered in, or -1.
		deleteBegan, deleteEnded int32
	}
	var mu sync.Mutex
	msgs := map[string]*sent{}
	send := func(q *sqs.Queue, w, i int) error {
		body := fmt.Sprintf("%s-w%d-%d-", q.Arn(), w, i) + strings.Repeat("b", (i*37)%2000)
		in := sqs.SendInput{Body: body}
		attr := ""
		if i%3 == 0 {
			attr = fmt.Sprint("a", i)
			in.Attributes = []sqs.MessageAttribute{{Name: "k", DataType: "String", StringValue: attr}}
		}
		res, err := q.Send(in)
		if err != nil {
			return err
		}
		mu.Lock()
		msgs[res.MessageID] = &sent{body: body, attr: attr, sentIn: phase.Load(), deleteBegan: -1, deleteEnded: -1}
		mu.Unlock()
		return nil
	}
	var queues []*sqs.Queue // one per worker, which alone receives from it
	for k := range 4 {
		q, err := e.CreateQueue(fmt.Sprint("q", k), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
		for i := range 700 {
			if err := send(q, -1, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	snapshot := map[string][]byte{}
	emit := func(k, v []byte) error {
		snapshot[string(k)] = append([]byte(nil), v...)
		return nil
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var rounds atomic.Int32
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := queues[w]
			ten, zero := 10, 0
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := send(q, w, i); err != nil {
					t.Error(err)
					return
				}
				got, err := q.Receive(context.Background(), sqs.ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero})
				if err != nil {
					t.Error(err)
					return
				}
				rounds.Add(1)
				for k, m := range got {
					if k%2 == 1 {
						continue // left in flight
					}
					mu.Lock()
					s := msgs[m.MessageID]
					mu.Unlock()
					began := phase.Load()
					if err := q.Delete(m.ReceiptHandle); err != nil {
						t.Error(err)
						return
					}
					ended := phase.Load()
					mu.Lock()
					s.deleteBegan, s.deleteEnded = began, ended
					mu.Unlock()
				}
			}
		}()
	}
	for rounds.Load() < 3*int32(len(queues)) { // changes under way before the snapshot begins
		runtime.Gosched()
	}
	phase.Store(phaseDuring)
	if err := durable.EmitSQS(e, ns, emit); err != nil {
		t.Fatal(err)
	}
	phase.Store(phaseAfter)
	close(stop)
	wg.Wait()

	got := durable.NewRecovered()
	for k, v := range snapshot {
		if err := got.Load([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	r := sqs.New(sqs.Options{})
	t.Cleanup(r.Close)
	if err := got.SQS(ns).Into(r); err != nil {
		t.Fatal(err)
	}
	restored := map[string]bool{}
	for _, q := range queues {
		rq, err := r.Queue(q.Arn()[strings.LastIndex(q.Arn(), ":")+1:])
		if err != nil {
			t.Fatal(err)
		}
		p, err := rq.Peek(sqs.PeekOptions{Limit: sqs.MaxPeekLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) == sqs.MaxPeekLimit {
			t.Fatalf("queue %s restored %d messages or more: the test sees only the first", q.Arn(), len(p.Messages))
		}
		for _, m := range p.Messages {
			s := msgs[m.MessageID]
			switch {
			case s == nil:
				t.Fatalf("restored message %s was never sent", m.MessageID)
			case restored[m.MessageID]:
				t.Fatalf("message %s restored twice", m.MessageID)
			case m.Body != s.body || !strings.HasPrefix(m.Body, q.Arn()+"-"):
				t.Fatalf("message %s restored with body %.80q, sent %.80q", m.MessageID, m.Body, s.body)
			case s.attr == "" && len(m.MessageAttributes) != 0,
				s.attr != "" && (len(m.MessageAttributes) != 1 || m.MessageAttributes[0].StringValue != s.attr):
				t.Fatalf("message %s restored with attributes %v, sent %q", m.MessageID, m.MessageAttributes, s.attr)
			case s.deleteEnded == phaseBefore:
				t.Fatalf("message %s was deleted before the snapshot began, and restored", m.MessageID)
			}
			restored[m.MessageID] = true
		}
	}
	during := 0
	for id, s := range msgs {
		lived := s.sentIn == phaseBefore && (s.deleteBegan == -1 || s.deleteBegan == phaseAfter)
		if lived && !restored[id] {
			t.Errorf("message %s lived through the snapshot and is not restored", id)
		}
		if s.sentIn == phaseDuring || s.deleteEnded == phaseDuring {
			during++
		}
	}
	t.Logf("%d messages restored; %d sent or deleted while the snapshot ran", len(restored), during)
}
