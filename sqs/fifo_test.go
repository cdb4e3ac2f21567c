package sqs

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"sync"
	"testing"
	"time"
)

func fifoQueue(t *testing.T, e *Engine, name string, attrs map[string]string) *Queue {
	t.Helper()
	a := map[string]string{AttrFifoQueue: "true"}
	for k, v := range attrs {
		a[k] = v
	}
	return mustQueue(t, e, name, a)
}

func sendFifo(t *testing.T, q *Queue, group, dedup, body string) SendResult {
	t.Helper()
	r, err := q.Send(SendInput{Body: body, GroupID: group, DeduplicationID: dedup})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return r
}

func bodies(rs []Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Body
	}
	return out
}

func TestFifoNamesAndAttributes(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	if _, err := e.CreateQueue("nofifo.fifo", nil, nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf(".fifo name without FifoQueue: %v", err)
	}
	if _, err := e.CreateQueue("nosuffix", map[string]string{AttrFifoQueue: "true"}, nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf("FifoQueue without .fifo: %v", err)
	}
	q := fifoQueue(t, e, "f.fifo", nil)
	as, _ := q.Attributes([]string{AttrAll})
	got := map[string]string{}
	for _, a := range as {
		got[a.Name] = a.Value
	}
	for k, v := range map[string]string{AttrFifoQueue: "true", AttrContentBasedDeduplication: "false", AttrDeduplicationScope: "queue", AttrFifoThroughputLimit: "perQueue"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if err := q.SetAttributes(map[string]string{AttrFifoQueue: "false"}); code(err) != "InvalidAttributeValue" {
		t.Fatalf("changing FifoQueue: %v", err)
	}
	if err := q.SetAttributes(map[string]string{AttrFifoThroughputLimit: "perMessageGroupId"}); code(err) != "InvalidAttributeValue" {
		t.Fatalf("perMessageGroupId with queue scope: %v", err)
	}
	if err := q.SetAttributes(map[string]string{AttrFifoThroughputLimit: "perMessageGroupId", AttrDeduplicationScope: "messageGroup"}); err != nil {
		t.Fatalf("high throughput mode: %v", err)
	}
}

func TestFifoSendErrors(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := fifoQueue(t, e, "err.fifo", nil)
	cases := []struct {
		in   SendInput
		code string
		msg  string
	}{
		{SendInput{Body: "b", DeduplicationID: "d"}, "MissingRequiredParameterException", "The request must contain the parameter MessageGroupId."},
		{SendInput{Body: "b", GroupID: "g"}, "InvalidParameterValueException", "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"},
		{SendInput{Body: "b", GroupID: "g", DeduplicationID: "d", DelaySeconds: ptr(2)}, "InvalidParameterValueException", "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type."},
	}
	for _, tc := range cases {
		_, err := q.Send(tc.in)
		if code(err) != tc.code || err.Error() != err.(interface{ Error() string }).Error() || messageOf(err) != tc.msg {
			t.Errorf("%+v: %v", tc.in, err)
		}
	}
}

func messageOf(err error) string {
	if e, ok := err.(interface{ MessageFor(bool) string }); ok {
		return e.MessageFor(false)
	}
	return ""
}

func TestFifoOrderAndGroupLock(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := fifoQueue(t, e, "order.fifo", nil)
	for i := 1; i <= 3; i++ {
		sendFifo(t, q, "a", "a"+strconv.Itoa(i), "a"+strconv.Itoa(i))
		sendFifo(t, q, "b", "b"+strconv.Itoa(i), "b"+strconv.Itoa(i))
	}
	first := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(2)})
	if fmt.Sprint(bodies(first)) != "[a1 a2]" {
		t.Fatalf("first receive %v", bodies(first))
	}
	// Group a is locked while a1/a2 are in flight; b is free.
	second := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if fmt.Sprint(bodies(second)) != "[b1 b2 b3]" {
		t.Fatalf("second receive %v", bodies(second))
	}
	if len(receive(t, q, ReceiveInput{})) != 0 {
		t.Fatal("a locked group handed out a3")
	}
	// Deleting a1 alone keeps a locked (a2 is still in flight).
	if err := q.Delete(first[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if len(receive(t, q, ReceiveInput{})) != 0 {
		t.Fatal("group unlocked with a message still in flight")
	}
	// a2's visibility ends: it comes back before a3, in order.
	c.Advance(30 * time.Second)
	third := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if fmt.Sprint(bodies(third)) != "[a2 a3 b1 b2 b3]" {
		t.Fatalf("after visibility expiry %v", bodies(third))
	}
	// An expired handle can no longer delete on a FIFO queue.
	if err := q.Delete(first[1].ReceiptHandle); code(err) != "InvalidParameterValueException" || messageOf(err) != "Value "+first[1].ReceiptHandle+" for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired." {
		t.Fatalf("expired handle: %v", err)
	}
}

func TestFifoDeduplication(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := fifoQueue(t, e, "dedup.fifo", nil)
	r1 := sendFifo(t, q, "g", "same", "one")
	r2 := sendFifo(t, q, "g", "same", "two")
	if r1.MessageID != r2.MessageID || r1.SequenceNumber != r2.SequenceNumber || r1.SequenceNumber == "" {
		t.Fatalf("duplicate answered %+v, first %+v", r2, r1)
	}
	if r2.MD5OfBody != MD5OfBody("two") {
		t.Fatal("duplicate's MD5 is not of its own body")
	}
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if len(got) != 1 || got[0].Body != "one" {
		t.Fatalf("got %v", bodies(got))
	}
	if err := q.Delete(got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	// Remembered after deletion, until 5 minutes have passed.
	c.Advance(4*time.Minute + 59*time.Second)
	if r := sendFifo(t, q, "g", "same", "three"); r.MessageID != r1.MessageID {
		t.Fatal("dedup id forgotten within the window")
	}
	c.Advance(time.Second)
	if r := sendFifo(t, q, "g", "same", "four"); r.MessageID == r1.MessageID {
		t.Fatal("dedup id remembered past 5 minutes")
	}

	cbd := fifoQueue(t, e, "cbd.fifo", map[string]string{AttrContentBasedDeduplication: "true"})
	a, _ := cbd.Send(SendInput{Body: "same body", GroupID: "g", Attributes: []MessageAttribute{{Name: "x", DataType: "String", StringValue: "1"}}})
	b, _ := cbd.Send(SendInput{Body: "same body", GroupID: "h"})
	if a.MessageID != b.MessageID {
		t.Fatal("content-based dedup ignored equal bodies (attributes do not count)")
	}
	m := receive(t, cbd, ReceiveInput{SystemAttributeNames: []string{SysMessageDeduplicationID}})
	if len(m) != 1 || m[0].Attributes[0].Value != contentDedupID("same body") {
		t.Fatalf("dedup id attribute %+v", m)
	}

	scoped := fifoQueue(t, e, "scope.fifo", map[string]string{AttrDeduplicationScope: "messageGroup"})
	x := sendFifo(t, scoped, "g1", "d", "x")
	y := sendFifo(t, scoped, "g2", "d", "y")
	if x.MessageID == y.MessageID {
		t.Fatal("messageGroup scope deduplicated across groups")
	}
}

func TestFifoSequenceNumbers(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := fifoQueue(t, e, "seq.fifo", nil)
	prev := big.NewInt(0)
	for i := 0; i < 50; i++ {
		r := sendFifo(t, q, "g"+strconv.Itoa(i%3), strconv.Itoa(i), "m")
		n, ok := new(big.Int).SetString(r.SequenceNumber, 10)
		if !ok || len(r.SequenceNumber) != 20 || n.Cmp(prev) <= 0 {
			t.Fatalf("sequence %q after %v", r.SequenceNumber, prev)
		}
		prev = n
	}
	m := receive(t, q, ReceiveInput{SystemAttributeNames: []string{"All"}})
	found := false
	for _, a := range m[0].Attributes {
		found = found || a.Name == SysSequenceNumber && len(a.Value) == 20
	}
	if !found {
		t.Fatalf("no SequenceNumber attribute: %+v", m[0].Attributes)
	}
}

func TestFifoReceiveRequestAttemptID(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := fifoQueue(t, e, "att.fifo", nil)
	sendFifo(t, q, "g", "1", "one")
	sendFifo(t, q, "h", "2", "two")
	first := receive(t, q, ReceiveInput{AttemptID: "try-1"})
	again := receive(t, q, ReceiveInput{AttemptID: "try-1"})
	if len(first) != 1 || len(again) != 1 || first[0].ReceiptHandle != again[0].ReceiptHandle {
		t.Fatalf("retry returned %v, first %v", again, first)
	}
	other := receive(t, q, ReceiveInput{AttemptID: "try-2"})
	if len(other) != 1 || other[0].Body == first[0].Body {
		t.Fatalf("another attempt saw %v", bodies(other))
	}
	if err := q.ChangeVisibility(first[0].ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	after := receive(t, q, ReceiveInput{AttemptID: "try-1"})
	if len(after) != 1 || after[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Fatal("attempt replayed after its message changed visibility")
	}
	c.Advance(5 * time.Minute)
	_ = receive(t, q, ReceiveInput{AttemptID: "try-1"})
}

func TestFifoDelayIsQueueLevelAndRetroactive(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := fifoQueue(t, e, "delay.fifo", map[string]string{AttrDelaySeconds: "60"})
	sendFifo(t, q, "g", "1", "late")
	if err := q.SetAttributes(map[string]string{AttrDelaySeconds: "10"}); err != nil {
		t.Fatal(err)
	}
	c.Advance(10 * time.Second)
	if got := receive(t, q, ReceiveInput{}); len(got) != 1 {
		t.Fatal("shorter queue delay did not apply to a waiting message")
	}
}

func TestFifoDeadLetter(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	std := mustQueue(t, e, "std-dlq", nil)
	if _, err := e.CreateQueue("bad.fifo", map[string]string{AttrFifoQueue: "true", AttrRedrivePolicy: `{"deadLetterTargetArn":"` + std.Arn() + `","maxReceiveCount":1}`}, nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf("FIFO source with a standard DLQ: %v", err)
	}
	dlq := fifoQueue(t, e, "dlq.fifo", nil)
	src := fifoQueue(t, e, "src.fifo", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":1}`})
	sendFifo(t, src, "g", "1", "poison")
	sendFifo(t, src, "g", "2", "next")
	c.Advance(time.Minute)
	if got := receive(t, src, ReceiveInput{VisibilityTimeout: ptr(0)}); len(got) != 1 || got[0].Body != "poison" {
		t.Fatalf("first receive %v", bodies(got))
	}
	got := receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if fmt.Sprint(bodies(got)) != "[next]" {
		t.Fatalf("after redrive the group gave %v", bodies(got))
	}
	moved := receive(t, dlq, ReceiveInput{SystemAttributeNames: []string{"All"}})
	if len(moved) != 1 || moved[0].Body != "poison" {
		t.Fatalf("DLQ %v", bodies(moved))
	}
	for _, a := range moved[0].Attributes {
		if a.Name == SysSentTimestamp && a.Value != strconv.FormatInt(c.Now().UnixMilli(), 10) {
			t.Fatalf("FIFO DLQ kept the old enqueue time %s", a.Value)
		}
	}
}

// TestFifoConcurrentConsumers checks under -race that many consumers never
// hold two in-flight messages of one group and never see a group out of order.
func TestFifoConcurrentConsumers(t *testing.T) {
	t.Parallel()
	e := New(Options{})
	defer e.Close()
	q, err := e.CreateQueue("conc.fifo", map[string]string{AttrFifoQueue: "true", AttrContentBasedDeduplication: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const groups, per = 20, 50
	for i := 0; i < per; i++ {
		for g := 0; g < groups; g++ {
			if _, err := q.Send(SendInput{Body: fmt.Sprintf("%d:%d", g, i), GroupID: strconv.Itoa(g)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	next := make([]int, groups)     // next expected index per group
	holding := make([]bool, groups) // a consumer holds a message of the group
	done := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				msgs, err := q.Receive(ctx, ReceiveInput{MaxNumberOfMessages: ptr(3), WaitTimeSeconds: ptr(1), VisibilityTimeout: ptr(60)})
				if err != nil {
					return
				}
				type held struct{ g, i int }
				var hs []held
				mu.Lock()
				seen := map[int]bool{}
				for _, m := range msgs {
					var g, i int
					fmt.Sscanf(m.Body, "%d:%d", &g, &i)
					if holding[g] && !seen[g] {
						t.Errorf("group %d handed out while in flight", g)
					}
					if i != next[g] {
						t.Errorf("group %d: got %d, want %d", g, i, next[g])
					}
					next[g] = i + 1
					holding[g], seen[g] = true, true
					hs = append(hs, held{g, i})
				}
				// Clear before deleting: the engine keeps the group locked until
				// the delete, so a receive of it before then is a real violation.
				for _, h := range hs {
					holding[h.g] = false
					done++
				}
				mu.Unlock()
				for k := len(msgs) - 1; k >= 0; k-- { // release in any order
					if err := q.Delete(msgs[k].ReceiptHandle); err != nil {
						t.Error(err)
					}
				}
				mu.Lock()
				if done == groups*per {
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if done != groups*per {
		t.Fatalf("consumed %d of %d", done, groups*per)
	}
}

// A FIFO message that is in flight when its retention period ends is
// dropped (at the latest when its visibility timeout ends); that unlocks
// its group, as a delete would: the group's later messages are received,
// and a poll that waits for them is woken then (both were left stuck
// until the next send to the group before).
func TestRetentionEndInFlightUnlocksTheGroup(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := fifoQueue(t, e, "r.fifo", map[string]string{AttrMessageRetentionPeriod: "60", AttrVisibilityTimeout: "120"})
	sendFifo(t, q, "g", "1", "first")
	if got := bodies(receive(t, q, ReceiveInput{})); len(got) != 1 || got[0] != "first" {
		t.Fatalf("first receive: %v", got)
	}
	c.Advance(100 * time.Second) // "first" has outlived its retention, in flight
	sendFifo(t, q, "g", "2", "second")

	c.Advance(10 * time.Second)
	got := make(chan []Received, 1)
	go func() {
		out, err := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		if err != nil {
			t.Error(err)
		}
		got <- out
	}()
	waitForWaiting(t, q, 1)
	c.Advance(10 * time.Second) // "first"'s visibility timeout ends: it is dropped
	select {
	case out := <-got:
		if b := bodies(out); len(b) != 1 || b[0] != "second" {
			t.Fatalf("the waiting poll got %v, want [second]", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting poll was not woken when the group unlocked")
	}
	if n := attr(t, q, AttrApproximateNotVisible); n != "1" {
		t.Fatalf("in flight: %s, want 1 (second)", n)
	}
}
