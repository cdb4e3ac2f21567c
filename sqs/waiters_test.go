package sqs

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// waiting counts the polls in q's wait list and those woken but not yet run.
func waiting(q *Queue) (inList, pending int) {
	q.lock()
	defer q.unlock()
	for w := q.waiters.head; w != nil; w = w.next {
		inList++
	}
	return inList, q.waiters.pending
}

// waitForWaiting waits until n polls sleep in q's wait list.
func waitForWaiting(t *testing.T, q *Queue, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in, pending := waiting(q)
		if in == n && pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d polls waiting, %d woken; want %d waiting", in, pending, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// quiet reports whether q is settled: no woken poll on its way, and no poll
// waiting while a message it could take is visible.
func quiet(q *Queue) error {
	q.lock()
	defer q.unlock()
	if q.waiters.pending != 0 {
		return fmt.Errorf("%d woken polls not run", q.waiters.pending)
	}
	if q.waiters.head != nil && q.takeable() {
		return fmt.Errorf("a poll waits while a message is visible")
	}
	return nil
}

// wokenNow reports whether w holds a wake token, taking it.
func wokenNow(w *waiter) bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

func newWaiters(q *Queue, n int) []*waiter {
	q.lock()
	defer q.unlock()
	ws := make([]*waiter, n)
	for i := range ws {
		ws[i] = &waiter{ch: make(chan struct{}, 1)}
		q.wait(ws[i], q.engine.clock.Now())
	}
	return ws
}

func TestWakeOnePollPerMessage(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "w1", nil)
	ws := newWaiters(q, 5)
	send(t, q, "a")
	if in, pending := waiting(q); in != 4 || pending != 1 || !wokenNow(ws[0]) || wokenNow(ws[1]) {
		t.Fatalf("after one send: %d waiting, %d woken; want the oldest woken alone", in, pending)
	}
	entries := []SendBatchEntry{{ID: "1", SendInput: SendInput{Body: "b"}}, {ID: "2", SendInput: SendInput{Body: "c"}}}
	if _, failed, err := q.SendBatch(entries); err != nil || len(failed) > 0 {
		t.Fatal(err, failed)
	}
	if in, pending := waiting(q); in != 2 || pending != 3 || !wokenNow(ws[1]) || !wokenNow(ws[2]) {
		t.Fatalf("after a batch of 2: %d waiting, %d woken", in, pending)
	}
}

func TestWakePassedOnByAPollThatLeaves(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "w2", nil)
	ws := newWaiters(q, 2)
	send(t, q, "a")
	q.lock()
	q.leave(ws[0]) // its context ended before it ran
	q.unlock()
	if !wokenNow(ws[1]) {
		t.Fatal("the wake of a poll that left was not passed on")
	}
	if in, pending := waiting(q); in != 0 || pending != 1 {
		t.Fatalf("%d waiting, %d woken", in, pending)
	}
}

func TestWokenForNothingWaitsFirstAgain(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "w3", nil)
	ws := newWaiters(q, 2)
	send(t, q, "a")
	receive(t, q, ReceiveInput{}) // another receive takes it first
	q.lock()
	q.resume(ws[0])
	if q.takeable() {
		t.Fatal("message still visible")
	}
	q.wait(ws[0], q.engine.clock.Now())
	first := q.waiters.head
	q.unlock()
	if first != ws[0] {
		t.Fatal("a poll woken for nothing lost its place")
	}
	send(t, q, "b")
	if !wokenNow(ws[0]) || wokenNow(ws[1]) {
		t.Fatal("the next send did not wake the oldest poll")
	}
}

func TestWakeOnVisibilityChangesAndExpiries(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "w4", map[string]string{AttrVisibilityTimeout: "30"})
	for _, b := range []string{"a", "b", "c"} {
		send(t, q, b)
	}
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	ws := newWaiters(q, 4)
	if err := q.ChangeVisibility(got[0].ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	if !wokenNow(ws[0]) || wokenNow(ws[1]) {
		t.Fatal("ChangeMessageVisibility to 0 did not wake exactly one poll")
	}
	if err := q.ChangeVisibility(got[1].ReceiptHandle, 5); err != nil {
		t.Fatal(err)
	}
	c.Advance(5 * time.Second) // the shared expiry timer re-armed for 5 s
	if !wokenNow(ws[1]) || wokenNow(ws[2]) {
		t.Fatal("a visibility expiry did not wake exactly one poll")
	}
	c.Advance(25 * time.Second)
	if !wokenNow(ws[2]) || wokenNow(ws[3]) {
		t.Fatal("the 30 s expiry did not wake exactly one poll")
	}
}

func TestFifoLockedGroupWakesNoPoll(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "w5.fifo", map[string]string{AttrFifoQueue: "true", AttrContentBasedDeduplication: "true"})
	sendG := func(body string) {
		t.Helper()
		if _, err := q.Send(SendInput{Body: body, GroupID: "g"}); err != nil {
			t.Fatal(err)
		}
	}
	sendG("1")
	got := receive(t, q, ReceiveInput{})
	ws := newWaiters(q, 2)
	sendG("2") // its group is locked: no poll could take it
	if wokenNow(ws[0]) {
		t.Fatal("a message in a locked group woke a poll")
	}
	if err := q.Delete(got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if !wokenNow(ws[0]) || wokenNow(ws[1]) {
		t.Fatal("unlocking the group did not wake exactly one poll")
	}
}

// TestConcurrentLongPollsEachMessageOnce runs many long polls on one queue
// and on several, feeds them single sends and batches, and checks that every
// message is received exactly once, that no poll sleeps while a message is
// visible, and that no goroutine is left behind.
func TestConcurrentLongPollsEachMessageOnce(t *testing.T) {
	before := runtime.NumGoroutine()
	e, _ := newTestEngine(t)
	queues := []*Queue{mustQueue(t, e, "busy", nil)}
	for i := range 4 {
		queues = append(queues, mustQueue(t, e, fmt.Sprintf("q%d", i), nil))
	}
	const rounds = 3
	per := map[*Queue]int{queues[0]: 40}
	for _, q := range queues[1:] {
		per[q] = 10
	}
	var mu sync.Mutex
	seen := map[string]int{}
	sent := 0
	for round := range rounds {
		var wg sync.WaitGroup
		for _, q := range queues {
			for range per[q] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20), MaxNumberOfMessages: ptr(1 + round)})
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					for _, m := range out {
						seen[m.Body]++
					}
					mu.Unlock()
				}()
			}
		}
		for _, q := range queues {
			waitForWaiting(t, q, per[q])
		}
		// Exactly as many messages as polls, in singles and batches of up
		// to 7, sent from several goroutines at once.
		var sends sync.WaitGroup
		for _, q := range queues {
			n := per[q] * (1 + round)
			sent += n
			sends.Add(1)
			go func() {
				defer sends.Done()
				for k := 0; k < n; {
					size := min(1+k%7, n-k)
					if size == 1 {
						if _, err := q.Send(SendInput{Body: fmt.Sprintf("%s/%d/%d", q.Name(), round, k)}); err != nil {
							t.Error(err)
						}
					} else {
						entries := make([]SendBatchEntry, size)
						for j := range entries {
							entries[j] = SendBatchEntry{ID: fmt.Sprint(j), SendInput: SendInput{Body: fmt.Sprintf("%s/%d/%d", q.Name(), round, k+j)}}
						}
						if _, failed, err := q.SendBatch(entries); err != nil || len(failed) > 0 {
							t.Error(err, failed)
						}
					}
					k += size
				}
			}()
		}
		sends.Wait()
		wg.Wait() // every poll returned: each got its share
		for _, q := range queues {
			if err := quiet(q); err != nil {
				t.Fatalf("%s: %v", q.Name(), err)
			}
			// Polls that took fewer than they asked for leave the rest.
			for out := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}); len(out) > 0; out = receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}) {
				for _, m := range out {
					seen[m.Body]++
				}
			}
		}
	}
	if len(seen) != sent {
		t.Fatalf("received %d distinct messages of %d sent", len(seen), sent)
	}
	for b, n := range seen {
		if n != 1 {
			t.Fatalf("%s received %d times", b, n)
		}
	}
	e.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
		}
		time.Sleep(time.Millisecond)
	}
}

// fillInflight sends n+extra messages to q (FIFO: ten per group, with
// content-based deduplication off, so each needs its own id) and receives
// until n are in flight; extra stay visible.
func fillInflight(t *testing.T, q *Queue, n, extra int, fifo bool) []string {
	t.Helper()
	for i := range n + extra {
		in := SendInput{Body: "m"}
		if fifo {
			in.GroupID, in.DeduplicationID = fmt.Sprintf("g%d", i/10), fmt.Sprint(i)
		}
		if _, err := q.Send(in); err != nil {
			t.Fatal(err)
		}
	}
	var handles []string
	for len(handles) < n {
		for _, m := range receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}) {
			handles = append(handles, m.ReceiptHandle)
		}
	}
	return handles
}

// At the in-flight limit a long poll sleeps though messages are visible;
// room freed by a delete wakes one poll per freed slot, and nothing else.
func TestWakeOnRoomFreedAtTheInflightLimit(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "full", nil)
	handles := fillInflight(t, q, inflightLimit, 20, false)
	ws := newWaiters(q, 13)
	send(t, q, "sent while full") // makes a message visible, but no room
	for _, w := range ws {
		if wokenNow(w) {
			t.Fatal("a send woke a poll at the in-flight limit")
		}
	}
	if errs, err := q.DeleteBatch(handles[:10]); err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	for i, w := range ws {
		if wokenNow(w) != (i < 10) {
			t.Fatalf("after a batch of 10 deletes at the limit, poll %d woken: %v", i, i >= 10)
		}
	}
	if err := q.Delete(handles[10]); err != nil {
		t.Fatal(err)
	}
	if wokenNow(ws[11]) {
		t.Fatal("a delete below the limit woke a poll (ten woken polls have yet to run)")
	}
	if err := q.Delete(handles[11]); err != nil {
		t.Fatal(err)
	}
	if wokenNow(ws[10]) || wokenNow(ws[11]) {
		t.Fatal("deletes below the limit woke polls while woken ones have yet to run")
	}
}

// Long polls at the limit, run for real on the injected clock: each delete
// of a full queue hands a waiting poll a message before its wait ends.
func TestLongPollAtTheInflightLimitWakesOnDelete(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		e, _ := newTestEngine(t)
		name, attrs, limit := "full-poll", map[string]string(nil), inflightLimit
		if fifo {
			name, attrs, limit = "full-poll.fifo", map[string]string{AttrFifoQueue: "true"}, fifoInflightLimit
		}
		q := mustQueue(t, e, name, attrs)
		handles := fillInflight(t, q, limit, 40, fifo) // FIFO: four more groups
		const polls = 3
		done := make(chan int, polls)
		for range polls {
			go func() {
				out, err := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20), MaxNumberOfMessages: ptr(1)})
				if err != nil {
					t.Error(err)
				}
				done <- len(out)
			}()
		}
		waitForWaiting(t, q, polls)
		if errs, err := q.DeleteBatch(handles[:2]); err != nil || errs[0] != nil || errs[1] != nil {
			t.Fatal(errs, err)
		}
		// The clock does not move: only the freed room can end these polls.
		woken := func() {
			t.Helper()
			select {
			case n := <-done:
				if n != 1 {
					t.Fatalf("fifo %v: a woken poll got %d messages", fifo, n)
				}
			case <-time.After(10 * time.Second): // a hang guard, not a timing
				t.Fatalf("fifo %v: a poll at the limit was not woken by a delete", fifo)
			}
		}
		woken()
		woken()
		waitForWaiting(t, q, 1) // the third: no room left for it
		if err := q.Delete(handles[2]); err != nil {
			t.Fatal(err)
		}
		woken()
		if err := quiet(q); err != nil {
			t.Fatal(err)
		}
	}
}

// The other ways room frees at the limit: a visibility change to 0 and an
// expiry make the message visible (one wake each), and a message in flight
// past its retention is dropped when its visibility ends, which frees room
// for the messages still visible.
func TestWakeAtTheInflightLimitOnVisibilityAndRetention(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "full-vis", map[string]string{AttrVisibilityTimeout: "70", AttrMessageRetentionPeriod: "60"})
	handles := fillInflight(t, q, inflightLimit, 0, false)
	ws := newWaiters(q, 4)
	if err := q.ChangeVisibility(handles[0], 0); err != nil {
		t.Fatal(err)
	}
	if !wokenNow(ws[0]) || wokenNow(ws[1]) {
		t.Fatal("ChangeMessageVisibility to 0 at the limit did not wake exactly one poll")
	}
	if out := receive(t, q, ReceiveInput{}); len(out) != 1 { // ws[0]'s part, back to the limit
		t.Fatalf("received %d", len(out))
	}
	q.lock()
	q.resume(ws[0])
	q.unlock()
	c.Advance(30 * time.Second)
	send(t, q, "visible, no room")
	if wokenNow(ws[1]) {
		t.Fatal("a send woke a poll at the limit")
	}
	c.Advance(40 * time.Second) // the 70 s visibility ends, past the 60 s retention
	if !wokenNow(ws[1]) {
		t.Fatal("messages dropped from flight at retention end woke no poll")
	}
	if out := receive(t, q, ReceiveInput{}); len(out) != 1 || out[0].Body != "visible, no room" {
		t.Fatalf("received %+v", out)
	}
}
