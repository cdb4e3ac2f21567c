package sqs

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

// finishWithin runs f and fails the test if it has not returned after d,
// printing every goroutine: it detects a deadlock, it measures nothing.
func finishWithin(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatalf("still running after %v: deadlock (goroutines above)", d)
	}
}

func redriveTo(target *Queue, max int) map[string]string {
	return map[string]string{AttrRedrivePolicy: fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, target.Arn(), max)}
}

// A queue may be its own dead-letter queue. Setting it once deadlocked the
// queue (the target's lock was taken under the queue's own). Now a message
// past maxReceiveCount moves into the queue itself, marked as dead-lettered
// from it, and is received again.
func TestSelfRedrive(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "self", nil)
	finishWithin(t, 10*time.Second, func() {
		if err := q.SetAttributes(redriveTo(q, 2)); err != nil {
			t.Error(err)
			return
		}
		if names, err := e.DeadLetterSourceQueues("self"); err != nil || len(names) != 1 || names[0] != "self" {
			t.Errorf("sources %v %v", names, err)
		}
		sent := send(t, q, "poison")
		for i := 0; i < 2; i++ {
			if got := receive(t, q, ReceiveInput{VisibilityTimeout: ptr(0)}); len(got) != 1 {
				t.Errorf("receive %d: %v", i+1, got)
				return
			}
		}
		// The third receive moves it into the queue itself and hands it out
		// again; a long poll on a manual clock must not spin meanwhile.
		got := receive(t, q, ReceiveInput{WaitTimeSeconds: ptr(20), SystemAttributeNames: []string{"All"}})
		if len(got) != 1 || got[0].MessageID != sent.MessageID || sysAttr(got[0].Attributes, SysDeadLetterQueueSourceArn) != q.Arn() {
			t.Errorf("after the move: %+v", got)
			return
		}
		if n := sysAttr(got[0].Attributes, SysApproximateReceiveCount); n != "3" {
			t.Errorf("ApproximateReceiveCount %s", n)
		}
		if err := q.Delete(got[0].ReceiptHandle); err != nil {
			t.Error(err)
		}
		if attr(t, q, AttrApproximateNumberOfMessages) != "0" || attr(t, q, AttrApproximateNotVisible) != "0" {
			t.Error("the moved message outlived its deletion")
		}
	})
}

func TestSelfRedriveObeysItsOwnRedriveAllowPolicy(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "picky", nil)
	other := mustQueue(t, e, "other", nil)
	finishWithin(t, 10*time.Second, func() {
		byOther := `{"redrivePermission":"byQueue","sourceQueueArns":["` + other.Arn() + `"]}`
		if err := q.SetAttributes(map[string]string{AttrRedriveAllowPolicy: byOther}); err != nil {
			t.Error(err)
		}
		if err := q.SetAttributes(redriveTo(q, 1)); code(err) != "InvalidParameterValueException" {
			t.Errorf("a queue its own RedriveAllowPolicy excludes became its DLQ: %v", err)
		}
		// Set together, the new RedriveAllowPolicy decides.
		both := redriveTo(q, 1)
		both[AttrRedriveAllowPolicy] = `{"redrivePermission":"allowAll"}`
		if err := q.SetAttributes(both); err != nil {
			t.Error(err)
		}
		// A queue being created cannot name itself: it does not exist yet.
		if _, err := e.CreateQueue("fresh", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + e.Arn("fresh") + `","maxReceiveCount":1}`}, nil); code(err) != "InvalidParameterValueException" {
			t.Errorf("CreateQueue naming itself: %v", err)
		}
	})
}

// A message moved into a DLQ could be received there but not deleted: its
// later receive handles were not recorded.
func TestDeadLetteredMessageCanBeDeleted(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "dlq", nil)
	src := mustQueue(t, e, "src", nil)
	if err := src.SetAttributes(redriveTo(dlq, 1)); err != nil {
		t.Fatal(err)
	}
	send(t, src, "m")
	receive(t, src, ReceiveInput{VisibilityTimeout: ptr(0)})
	if got := receive(t, src, ReceiveInput{}); len(got) != 0 {
		t.Fatal("received past maxReceiveCount")
	}
	got := receive(t, dlq, ReceiveInput{})
	if len(got) != 1 {
		t.Fatalf("DLQ gave %v", got)
	}
	if err := dlq.Delete(got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	if got := receive(t, dlq, ReceiveInput{}); len(got) != 0 {
		t.Fatal("a deleted dead-lettered message came back")
	}
}

// In a redrive cycle each queue counts its own receives: a message goes
// round, received maxReceiveCount times in each queue, and is never lost.
func TestRedriveCycles(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d queues", n), func(t *testing.T) {
			t.Parallel()
			e, _ := newTestEngine(t)
			qs := make([]*Queue, n)
			for i := range qs {
				qs[i] = mustQueue(t, e, fmt.Sprintf("c%d", i), nil)
			}
			finishWithin(t, 10*time.Second, func() {
				for i, q := range qs {
					if err := q.SetAttributes(redriveTo(qs[(i+1)%n], 1)); err != nil {
						t.Error(err)
						return
					}
				}
				for i, q := range qs {
					prev := qs[(i+n-1)%n].Name()
					if names, _ := e.DeadLetterSourceQueues(q.Name()); len(names) != 1 || names[0] != prev {
						t.Errorf("sources of %s: %v", q.Name(), names)
					}
				}
				sent := send(t, qs[0], "round")
				for lap := 0; lap < 2; lap++ {
					for i, q := range qs {
						got := receive(t, q, ReceiveInput{VisibilityTimeout: ptr(0), SystemAttributeNames: []string{"All"}})
						if len(got) != 1 || got[0].MessageID != sent.MessageID {
							t.Errorf("lap %d, %s: %v", lap, q.Name(), got)
							return
						}
						if lap > 0 || i > 0 {
							if src := sysAttr(got[0].Attributes, SysDeadLetterQueueSourceArn); src != qs[(i+n-1)%n].Arn() {
								t.Errorf("lap %d, %s: source %s", lap, q.Name(), src)
							}
						}
						// The next receive moves it on.
						if got := receive(t, q, ReceiveInput{}); len(got) != 0 {
							t.Errorf("lap %d, %s: received past maxReceiveCount", lap, q.Name())
						}
					}
				}
			})
		})
	}
}

// TestConcurrentMutualRedrive sets pairs of queues as each other's DLQ (and
// as their own, and back to none) from several goroutines at once, while
// others send, receive (moving messages round the cycles), read attributes,
// list dead-letter sources and queues, create and delete queues that use
// them as DLQs, and start move tasks. Two concurrent mutual SetAttributes
// used to deadlock both queues. Every message sent is still in its pair at
// the end: moves and move tasks neither lose nor copy messages (a move task
// that met a message without a destination used to drop the rest of its
// batch).
func TestConcurrentMutualRedrive(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	const pairs, rounds = 3, 150
	type pair struct {
		a, b *Queue
		sent int
		mu   sync.Mutex
	}
	ps := make([]*pair, pairs)
	for i := range ps {
		ps[i] = &pair{a: mustQueue(t, e, fmt.Sprintf("a%d", i), nil), b: mustQueue(t, e, fmt.Sprintf("b%d", i), nil)}
	}
	finishWithin(t, 60*time.Second, func() {
		var wg sync.WaitGroup
		run := func(f func(i int)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < rounds; i++ {
					f(i)
				}
			}()
		}
		for _, p := range ps {
			run(func(i int) { // a -> b, sometimes a -> a or none
				switch i % 5 {
				case 3:
					_ = p.a.SetAttributes(redriveTo(p.a, 1))
				case 4:
					_ = p.a.SetAttributes(map[string]string{AttrRedrivePolicy: ""})
				default:
					_ = p.a.SetAttributes(redriveTo(p.b, 1+i%2))
				}
			})
			run(func(i int) { _ = p.b.SetAttributes(redriveTo(p.a, 1+i%3)) }) // b -> a
			run(func(i int) {
				q := p.a
				if i%2 == 1 {
					q = p.b
				}
				if _, err := q.Send(SendInput{Body: "m"}); err != nil {
					t.Error(err)
					return
				}
				p.mu.Lock()
				p.sent++
				p.mu.Unlock()
			})
			for _, q := range []*Queue{p.a, p.b} {
				run(func(int) {
					_, _ = q.Receive(t.Context(), ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(0)})
				})
				run(func(int) { _, _ = q.Attributes([]string{AttrAll}) })
			}
			run(func(int) { _, _ = e.DeadLetterSourceQueues(p.a.Name()); _, _ = e.DeadLetterSourceQueues(p.b.Name()) })
			run(func(i int) {
				if _, err := e.StartMoveTask(p.a.Arn(), "", nil); err == nil {
					c.Advance(time.Second)
				}
			})
		}
		run(func(i int) {
			for _, n := range e.ListQueues("") {
				if q, err := e.Queue(n); err == nil {
					_, _ = q.Attributes([]string{AttrApproximateNumberOfMessages})
					q.NoisyGroups()
				}
			}
		})
		run(func(i int) {
			name := fmt.Sprintf("user%d", i%3)
			if _, err := e.CreateQueue(name, redriveTo(ps[i%pairs].a, 1), nil); err == nil && i%2 == 0 {
				_ = e.DeleteQueue(name)
			}
		})
		wg.Wait()
	})
	for _, p := range ps {
		for _, q := range []*Queue{p.a, p.b} {
			if err := q.SetAttributes(map[string]string{AttrRedrivePolicy: ""}); err != nil {
				t.Fatal(err)
			}
		}
		total := 0
		for _, q := range []*Queue{p.a, p.b} {
			for _, n := range []string{AttrApproximateNumberOfMessages, AttrApproximateNotVisible, AttrApproximateDelayed} {
				var v int
				fmt.Sscan(attr(t, q, n), &v)
				total += v
			}
		}
		if total != p.sent {
			t.Errorf("pair %s/%s holds %d messages, %d were sent", p.a.Name(), p.b.Name(), total, p.sent)
		}
	}
}
