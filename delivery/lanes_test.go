package delivery

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
)

// liveEndpoint answers at once and tells each delivery on a channel.
type liveEndpoint struct{ done chan string }

func (liveEndpoint) remote(*Dispatcher) bool { return true }

func (e liveEndpoint) attempt(_ *Dispatcher, j *job) result {
	e.done <- j.id()
	return ok()
}

func waitFor(t *testing.T, ch chan string, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d of %d deliveries to the live endpoint", i, n)
		}
	}
}

// Not parallel: it counts the process's goroutines, which other tests'
// dispatchers would add to.
func TestDeadEndpointsSlowOnlyThemselves(t *testing.T) {
	dead := &fakeEndpoint{isRemote: true, hold: make(chan struct{})}
	live := liveEndpoint{done: make(chan string, 1000)}
	d := fakeDispatcher(clock.NewManual(time.Unix(0, 0)), dead, 4)
	d.endpoints["live"] = live
	d.lanes.slowTime = time.Millisecond
	goroutines := runtime.NumGoroutine()
	// More dead subscriptions than workers, with 20 messages each, first.
	for s := 0; s < 4*slowBudget; s++ {
		for i := 0; i < 20; i++ {
			_ = d.Deliver(&Message{ID: fmt.Sprint(s, "-", i)}, Subscriber{Arn: fmt.Sprint("dead", s), Protocol: "fake"})
		}
	}
	for i := 0; i < 200; i++ {
		_ = d.Deliver(&Message{ID: fmt.Sprint("live-", i)}, Subscriber{Arn: "live", Protocol: "live"})
	}
	waitFor(t, live.done, 200)
	// The dead ones hold one attempt each at most, out of their own budget.
	if n := dead.inFlight.Load(); n > 4*slowBudget {
		t.Fatalf("%d attempts to dead endpoints in progress", n)
	}
	if g := runtime.NumGoroutine() - goroutines; g > 4*(1+slowBudget)+2 {
		t.Fatalf("%d goroutines for %d pending deliveries", g, 4*slowBudget*20)
	}
	// Every dead delivery still waits, none dropped to make room. Only the
	// dead lanes are counted: the live endpoint has the 200 deliveries, but
	// its last run may still be giving back its slot.
	counts, _ := d.lanes.counts()
	for s := 0; s < 4*slowBudget; s++ {
		if c := counts[fmt.Sprint("dead", s)]; c.queued+c.running != 20 || c.running > 1 {
			t.Fatalf("dead%d: %+v", s, c)
		}
	}
	dead.ok.Store(true)
	close(dead.hold)
	settle(t, d)
	if s := d.Stats(); s.Delivered != 200+4*slowBudget*20 || s.Pending != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestAFullSubscriptionOverflowsToItsDLQOrIsDropped(t *testing.T) {
	t.Parallel()
	dead := &fakeEndpoint{isRemote: true, hold: make(chan struct{})}
	dlq := &fakeQueue{}
	d := New(Options{Clock: clock.NewManual(time.Unix(0, 0)), Signer: &fakeSigner{}, Backlog: 3,
		Queues: fakeQueues{queueArn: dlq}, Links: Links{Base: func() string { return "http://localhost" }, CertFile: func() (string, error) { return "c.pem", nil }}})
	d.endpoints["fake"] = dead
	withDLQ := Subscriber{Arn: "with", Protocol: "fake", DeadLetterArn: queueArn}
	without := Subscriber{Arn: "without", Protocol: "fake"}
	for i := 0; i < 10; i++ {
		_ = d.Deliver(&Message{ID: fmt.Sprint("w", i), TopicArn: topicArn, Body: "x"}, withDLQ)
		_ = d.Deliver(&Message{ID: fmt.Sprint("o", i), TopicArn: topicArn, Body: "x"}, without)
	}
	if len(dlq.sent) != 7 {
		t.Fatalf("%d in the DLQ, want the 7 past the backlog of 3", len(dlq.sent))
	}
	counts := map[string]SubscriptionCounts{}
	for _, c := range d.Stats().Subscriptions {
		counts[c.SubscriptionArn] = c
	}
	if c := counts["with"]; c.Overflowed != 7 || c.DeadLettered != 7 || c.Pending != 3 {
		t.Fatalf("with a DLQ %+v", c)
	}
	if c := counts["without"]; c.Overflowed != 7 || c.Dropped != 7 || c.Pending != 3 {
		t.Fatalf("without %+v", c)
	}
	r := d.Deliveries("o9")
	if len(r) != 1 || r[0].Status != StatusDropped || !strings.Contains(r[0].Reason, "3 deliveries pending") {
		t.Fatalf("record %+v", r)
	}
	dead.ok.Store(true)
	close(dead.hold)
	settle(t, d)
	if s := d.Stats(); s.Pending != 0 || s.Overflowed != 14 {
		t.Fatalf("stats %+v", s)
	}
	// Room again: the next one is accepted.
	_ = d.Deliver(&Message{ID: "again", TopicArn: topicArn, Body: "x"}, without)
	settle(t, d)
	if r := d.Deliveries("again"); r[0].Status != StatusDelivered {
		t.Fatalf("after the backlog emptied %+v", r)
	}
}

func TestResetLetsGoOfEveryLane(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(0, 0))
	dead := &fakeEndpoint{isRemote: true, hold: make(chan struct{})}
	d := fakeDispatcher(clk, dead, 4)
	for i := 0; i < 10; i++ {
		_ = d.Deliver(&Message{ID: fmt.Sprint(i), Body: "x"}, Subscriber{Arn: "s", Protocol: "fake", Policy: httpPolicy()})
	}
	close(dead.hold) // every attempt fails: the ten wait for retries
	settle(t, d)
	if c := d.Stats().Subscriptions[0]; c.Pending != 10 {
		t.Fatalf("before the reset %+v", c)
	}
	d.Reset()
	clk.Advance(time.Hour)
	settle(t, d)
	counts, busy := d.lanes.counts()
	if busy != 0 || counts["s"].pending != 0 {
		t.Fatalf("after the reset: %+v, %d busy", counts, busy)
	}
}

// A live subscription once misjudged slow gets a fast slot back even while
// hanging endpoints fill the slow budget. Not parallel: it times attempts.
func TestMisjudgedSlowGetsAFastSlotWhenTheSlowBudgetIsFull(t *testing.T) {
	dead := &fakeEndpoint{isRemote: true, hold: make(chan struct{})}
	live := &pausingEndpoint{liveEndpoint: liveEndpoint{done: make(chan string, 1000)}}
	d := fakeDispatcher(clock.NewManual(time.Unix(0, 0)), dead, 4)
	d.endpoints["live"] = live
	d.lanes.slowTime = time.Millisecond
	for s := 0; s < 4*slowBudget; s++ {
		_ = d.Deliver(&Message{ID: fmt.Sprint(s)}, Subscriber{Arn: fmt.Sprint("dead", s), Protocol: "fake"})
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		d.lanes.mu.Lock()
		full := d.lanes.slow >= d.lanes.maxSlow
		d.lanes.mu.Unlock()
		if full {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hanging endpoints never filled the slow budget")
		}
	}
	// Its first attempt pauses past slowTime and succeeds: the lane is slow.
	_ = d.Deliver(&Message{ID: "live-first"}, Subscriber{Arn: "live", Protocol: "live"})
	waitFor(t, live.done, 1)
	for i := 0; i < 20; i++ {
		_ = d.Deliver(&Message{ID: fmt.Sprint("live-", i)}, Subscriber{Arn: "live", Protocol: "live"})
	}
	waitFor(t, live.done, 20)
	dead.ok.Store(true)
	close(dead.hold)
	settle(t, d)
}

// pausingEndpoint is a live endpoint whose first attempt takes 20 ms.
type pausingEndpoint struct {
	liveEndpoint
	paused atomic.Bool
}

func (e *pausingEndpoint) attempt(d *Dispatcher, j *job) result {
	if !e.paused.Swap(true) {
		time.Sleep(20 * time.Millisecond)
	}
	return e.liveEndpoint.attempt(d, j)
}

// Settle returns once the lanes have given back the runs of what it waited
// for: the counts it leaves show nothing pending.
func TestSettleLeavesNoDeliveryCounted(t *testing.T) {
	t.Parallel()
	ep := &fakeEndpoint{isRemote: true}
	ep.ok.Store(true)
	d := fakeDispatcher(clock.NewManual(time.Unix(0, 0)), ep, 4)
	for round := 0; round < 50; round++ {
		for i := 0; i < 20; i++ {
			_ = d.Deliver(&Message{ID: fmt.Sprint(round, "-", i)}, Subscriber{Arn: fmt.Sprint("s", i%5), Protocol: "fake"})
		}
		settle(t, d)
		s := d.Stats()
		if s.Pending != 0 || d.Pending() != 0 {
			t.Fatalf("round %d: %d pending after Settle (Pending() %d)", round, s.Pending, d.Pending())
		}
		for _, c := range s.Subscriptions {
			if c.Pending != 0 {
				t.Fatalf("round %d: %+v after Settle", round, c)
			}
		}
	}
}
