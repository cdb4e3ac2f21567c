package sqs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func peek(t *testing.T, q *Queue, opts PeekOptions) PeekResult {
	t.Helper()
	r, err := q.Peek(opts)
	if err != nil {
		t.Fatalf("Peek: %v", err)
	}
	return r
}

func peekBodies(ms []PeekedMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Body+":"+string(m.State))
	}
	return out
}

func sysAttr(as []Attribute, name string) string {
	for _, a := range as {
		if a.Name == name {
			return a.Value
		}
	}
	return ""
}

func TestPeekStatesAndFields(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "peek", map[string]string{AttrVisibilityTimeout: "30"})
	send(t, q, "first")
	if _, err := q.Send(SendInput{Body: "late", DelaySeconds: ptr(60)}); err != nil {
		t.Fatal(err)
	}
	got := receive(t, q, ReceiveInput{}) // "first" goes in flight
	if len(got) != 1 || got[0].Body != "first" {
		t.Fatalf("received %v", got)
	}
	attrs := []MessageAttribute{{Name: "kind", DataType: "String", StringValue: "order"}}
	sent, err := q.Send(SendInput{Body: "second", Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	send(t, q, "third")

	r := peek(t, q, PeekOptions{})
	if want := []string{"second:visible", "third:visible", "first:inflight", "late:delayed"}; !slices.Equal(peekBodies(r.Messages), want) {
		t.Fatalf("peek = %v, want %v", peekBodies(r.Messages), want)
	}
	if r.More {
		t.Fatal("More set on a complete page")
	}
	second, inflight, delayed := r.Messages[0], r.Messages[2], r.Messages[3]
	if second.MessageID != sent.MessageID || second.MD5OfBody != sent.MD5OfBody || second.MD5OfMessageAttributes != sent.MD5OfAttrs {
		t.Fatalf("second = %+v, sent %+v", second, sent)
	}
	if len(second.MessageAttributes) != 1 || second.MessageAttributes[0].StringValue != "order" {
		t.Fatalf("attributes %v", second.MessageAttributes)
	}
	if sysAttr(second.Attributes, SysApproximateFirstReceiveTimestamp) != "" || sysAttr(second.Attributes, SysSentTimestamp) == "" {
		t.Fatalf("never-received message's attributes %v", second.Attributes)
	}
	if !second.StateEnds.IsZero() || second.ReceiveCount != 0 || !second.SentAt.Equal(epoch) {
		t.Fatalf("visible message %+v", second)
	}
	if !second.ExpiresAt.Equal(epoch.Add(4 * 24 * time.Hour)) {
		t.Fatalf("ExpiresAt %v", second.ExpiresAt)
	}
	if inflight.ReceiveCount != 1 || !inflight.StateEnds.Equal(epoch.Add(30*time.Second)) {
		t.Fatalf("in flight %+v", inflight)
	}
	if sysAttr(inflight.Attributes, SysApproximateReceiveCount) != "1" || sysAttr(inflight.Attributes, SysSentTimestamp) == "" {
		t.Fatalf("system attributes %v", inflight.Attributes)
	}
	if !delayed.StateEnds.Equal(epoch.Add(60 * time.Second)) {
		t.Fatalf("delayed %+v", delayed)
	}

	// Peeking changed nothing: counts, receive counts and order are as before.
	peek(t, q, PeekOptions{})
	for n, want := range map[string]string{AttrApproximateNumberOfMessages: "2", AttrApproximateNotVisible: "1", AttrApproximateDelayed: "1"} {
		if got := attr(t, q, n); got != want {
			t.Fatalf("%s = %s, want %s", n, got, want)
		}
	}
	rec := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10), SystemAttributeNames: []string{"All"}})
	if len(rec) != 2 || rec[0].Body != "second" || sysAttr(rec[0].Attributes, SysApproximateReceiveCount) != "1" {
		t.Fatalf("receive after peek = %+v", rec)
	}
}

func TestPeekFilterAndLimit(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "filter", nil)
	for i := range 5 {
		send(t, q, fmt.Sprint(i))
	}
	receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(2)})
	if _, err := q.Send(SendInput{Body: "d", DelaySeconds: ptr(5)}); err != nil {
		t.Fatal(err)
	}

	r := peek(t, q, PeekOptions{States: []MessageState{MessageInflight, MessageDelayed}})
	if want := []string{"0:inflight", "1:inflight", "d:delayed"}; !slices.Equal(peekBodies(r.Messages), want) {
		t.Fatalf("inflight+delayed = %v", peekBodies(r.Messages))
	}
	r = peek(t, q, PeekOptions{Limit: 2})
	if want := []string{"2:visible", "3:visible"}; !slices.Equal(peekBodies(r.Messages), want) || !r.More {
		t.Fatalf("limit 2 = %v more=%v", peekBodies(r.Messages), r.More)
	}
	r = peek(t, q, PeekOptions{Limit: 6})
	if len(r.Messages) != 6 || r.More {
		t.Fatalf("limit 6 = %v more=%v", peekBodies(r.Messages), r.More)
	}
	if _, err := q.Peek(PeekOptions{States: []MessageState{"gone"}}); code(err) != ErrInvalidParameterValue.Code {
		t.Fatalf("bad state: %v", err)
	}

	states, err := ParseMessageStates(" visible, Delayed ,")
	if err != nil || !slices.Equal(states, []MessageState{MessageVisible, MessageDelayed}) {
		t.Fatalf("ParseMessageStates = %v, %v", states, err)
	}
	if _, err := ParseMessageStates("visible,bogus"); err == nil {
		t.Fatal("ParseMessageStates accepted bogus")
	}
	if s, err := ParseMessageStates(""); err != nil || s != nil {
		t.Fatalf("empty = %v, %v", s, err)
	}
}

func TestPeekSeesTimeWithoutMovingIt(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "time", map[string]string{AttrVisibilityTimeout: "30", AttrMessageRetentionPeriod: "120"})
	send(t, q, "a")
	if _, err := q.Send(SendInput{Body: "b", DelaySeconds: ptr(10)}); err != nil {
		t.Fatal(err)
	}
	receive(t, q, ReceiveInput{})
	c.Advance(30 * time.Second) // both come due; nothing touched the queue
	r := peek(t, q, PeekOptions{})
	if want := []string{"b:visible", "a:visible"}; !slices.Equal(peekBodies(r.Messages), want) {
		t.Fatalf("after 30s = %v", peekBodies(r.Messages))
	}
	if r := peek(t, q, PeekOptions{States: []MessageState{MessageInflight, MessageDelayed}}); len(r.Messages) != 0 {
		t.Fatalf("hidden after they came due: %v", peekBodies(r.Messages))
	}
	c.Advance(90 * time.Second) // past retention
	if r := peek(t, q, PeekOptions{}); len(r.Messages) != 0 || r.More {
		t.Fatalf("expired messages listed: %v", peekBodies(r.Messages))
	}
}

func TestPeekDoesNotDeadLetter(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "dlq", nil)
	q := mustQueue(t, e, "src", map[string]string{
		AttrVisibilityTimeout: "10",
		AttrRedrivePolicy:     `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":1}`,
	})
	send(t, q, "poison")
	receive(t, q, ReceiveInput{})
	c.Advance(10 * time.Second)
	for range 3 {
		r := peek(t, q, PeekOptions{})
		if len(r.Messages) != 1 || r.Messages[0].State != MessageVisible || r.Messages[0].ReceiveCount != 1 {
			t.Fatalf("source = %+v", r.Messages)
		}
		if r := peek(t, dlq, PeekOptions{}); len(r.Messages) != 0 {
			t.Fatalf("peek moved the message to the DLQ: %v", peekBodies(r.Messages))
		}
	}
	if got := receive(t, q, ReceiveInput{}); len(got) != 0 {
		t.Fatal("over-received message delivered")
	}
	r := peek(t, dlq, PeekOptions{})
	if len(r.Messages) != 1 || sysAttr(r.Messages[0].Attributes, SysDeadLetterQueueSourceArn) != q.Arn() {
		t.Fatalf("DLQ after the receive = %+v", r.Messages)
	}
}

func TestPeekFifo(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "peek.fifo", map[string]string{AttrFifoQueue: "true", AttrContentBasedDeduplication: "true"})
	for _, m := range []struct{ group, body string }{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"b", "b2"}} {
		if _, err := q.Send(SendInput{Body: m.body, GroupID: m.group}); err != nil {
			t.Fatal(err)
		}
	}
	if got := receive(t, q, ReceiveInput{}); len(got) != 1 || got[0].Body != "a1" {
		t.Fatalf("received %v", got) // group a is now locked
	}
	r := peek(t, q, PeekOptions{})
	if want := []string{"b1:visible", "b2:visible", "a2:visible", "a1:inflight"}; !slices.Equal(peekBodies(r.Messages), want) {
		t.Fatalf("peek = %v, want %v", peekBodies(r.Messages), want)
	}
	if sysAttr(r.Messages[0].Attributes, SysMessageGroupID) != "b" || sysAttr(r.Messages[0].Attributes, SysSequenceNumber) == "" {
		t.Fatalf("FIFO attributes %v", r.Messages[0].Attributes)
	}
	if r := peek(t, q, PeekOptions{Limit: 1}); len(r.Messages) != 1 || !r.More {
		t.Fatalf("limit 1 = %v", peekBodies(r.Messages))
	}
	// b is still the next group a receive takes.
	if got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}); len(got) != 2 || got[0].Body != "b1" {
		t.Fatalf("receive after peek = %v", got)
	}
}

func TestPeekDeletedQueue(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "gone", nil)
	if err := e.DeleteQueue("gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Peek(PeekOptions{}); code(err) != ErrQueueDoesNotExist.Code {
		t.Fatalf("Peek on a deleted queue: %v", err)
	}
	if _, err := e.Peek("gone", PeekOptions{}); code(err) != ErrQueueDoesNotExist.Code {
		t.Fatalf("Engine.Peek on a deleted queue: %v", err)
	}
}

// A page of a large queue costs what the page holds: Peek allocates the same
// for 100 messages as for 100,000, in every state.
func TestPeekCostsThePageNotTheQueue(t *testing.T) { // not parallel: AllocsPerRun
	allocs := func(n int, state MessageState) float64 {
		e, _ := newTestEngine(t)
		q := mustQueue(t, e, "big", map[string]string{AttrVisibilityTimeout: "600"})
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range n {
			in := SendInput{Body: "m"}
			if state == MessageDelayed {
				in.DelaySeconds = ptr(1 + rng.IntN(900))
			}
			if _, err := q.Send(in); err != nil {
				t.Fatal(err)
			}
			if state == MessageInflight && i%10 == 9 {
				receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(1 + rng.IntN(600))})
			}
		}
		opts := PeekOptions{States: []MessageState{state}, Limit: 10}
		if r := peek(t, q, opts); len(r.Messages) != 10 || !r.More {
			t.Fatalf("%s page of %d: %d messages", state, n, len(r.Messages))
		}
		return testing.AllocsPerRun(20, func() { _, _ = q.Peek(opts) })
	}
	for _, s := range []MessageState{MessageVisible, MessageInflight, MessageDelayed} {
		small, large := allocs(100, s), allocs(100000, s)
		if large > small+2 {
			t.Errorf("%s: %v allocations for 100 messages, %v for 100,000", s, small, large)
		}
	}
}

// Pages of hidden messages come in the order they become visible.
func TestPeekHiddenOrder(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "order", nil)
	rng := rand.New(rand.NewPCG(3, 4))
	var want []time.Time
	for range 500 {
		d := 1 + rng.IntN(900)
		if _, err := q.Send(SendInput{Body: "x", DelaySeconds: ptr(d)}); err != nil {
			t.Fatal(err)
		}
		want = append(want, epoch.Add(time.Duration(d)*time.Second))
	}
	slices.SortFunc(want, func(a, b time.Time) int { return a.Compare(b) })
	r := peek(t, q, PeekOptions{Limit: MaxPeekLimit + 5})
	if len(r.Messages) != 500 {
		t.Fatalf("%d messages", len(r.Messages))
	}
	for i, m := range r.Messages {
		if !m.StateEnds.Equal(want[i]) {
			t.Fatalf("message %d ends %v, want %v", i, m.StateEnds, want[i])
		}
	}
}

func TestPeekRacesWithTraffic(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "race", nil)
	var wg sync.WaitGroup
	ctx := context.Background()
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				switch w {
				case 0:
					_, _ = q.Send(SendInput{Body: "m", DelaySeconds: ptr(i % 3)})
				case 1:
					for _, m := range receiveNoFail(ctx, q) {
						_ = q.Delete(m.ReceiptHandle)
					}
				default:
					_, _ = q.Peek(PeekOptions{Limit: 50})
				}
			}
		}()
	}
	wg.Wait()
}

func receiveNoFail(ctx context.Context, q *Queue) []Received {
	out, _ := q.Receive(ctx, ReceiveInput{MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)})
	return out
}

// BenchmarkPeekFirstPage peeks the first 100 messages of a queue holding a
// million: visible, in flight and delayed.
func BenchmarkPeekFirstPage(b *testing.B) {
	e := New(Options{})
	defer e.Close()
	q, err := e.CreateQueue("million", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1_000_000 {
		in := SendInput{Body: "message body"}
		if i%3 == 0 {
			in.DelaySeconds = ptr(1 + i%900)
		}
		if _, err := q.Send(in); err != nil {
			b.Fatal(err)
		}
	}
	for range 1000 {
		_, _ = q.Receive(context.Background(), ReceiveInput{MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)})
	}
	for _, s := range []MessageState{MessageVisible, MessageInflight, MessageDelayed} {
		b.Run(string(s), func(b *testing.B) {
			opts := PeekOptions{States: []MessageState{s}}
			for b.Loop() {
				if r, _ := q.Peek(opts); len(r.Messages) != DefaultPeekLimit {
					b.Fatalf("%d messages", len(r.Messages))
				}
			}
		})
	}
}
