package sns

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
)

// recorder is a Deliverer that remembers what it was given.
type recorder struct {
	mu       sync.Mutex
	got      map[string][]*delivery.Message // by subscription ARN
	subs     map[string]delivery.Subscriber
	controls []*delivery.Control
}

func (r *recorder) Confirm(c *delivery.Control, _ delivery.Subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.controls = append(r.controls, c)
}

func (r *recorder) Deliver(m *delivery.Message, s delivery.Subscriber) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got, r.subs = map[string][]*delivery.Message{}, map[string]delivery.Subscriber{}
	}
	r.got[s.Arn] = append(r.got[s.Arn], m)
	r.subs[s.Arn] = s
	return nil
}

func (r *recorder) messages(arn string) []*delivery.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*delivery.Message(nil), r.got[arn]...)
}

func newEngine(t *testing.T) (*Engine, *recorder, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	r := &recorder{}
	return New(Options{Clock: clk, Deliverer: r}), r, clk
}

func str(s string) *string { return &s }

func TestPendingSubscriptionsReceiveNothingUntilConfirmed(t *testing.T) {
	t.Parallel()
	e, r, _ := newEngine(t)
	topic, err := e.CreateTopic("t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	arn, err := e.Subscribe(SubscribeInput{TopicArn: topic.Arn(), Protocol: "email-json", Endpoint: "a@example.com", ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(PublishInput{TopicArn: topic.Arn(), Message: str("before")}); err != nil {
		t.Fatal(err)
	}
	p := e.PendingSubscriptions()
	if len(p) != 1 || p[0].SubscriptionArn != arn || len(p[0].Token) != 256 {
		t.Fatalf("pending %+v", p)
	}
	if _, err := e.ConfirmSubscription(topic.Arn(), p[0].Token, true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(PublishInput{TopicArn: topic.Arn(), Message: str("after")}); err != nil {
		t.Fatal(err)
	}
	got := r.messages(arn)
	if len(got) != 1 || got[0].Body != "after" || len(e.PendingSubscriptions()) != 0 {
		t.Fatalf("delivered %v", got)
	}
	attrs, _ := e.SubscriptionAttributes(arn)
	if attrs[AttrConfirmationWasAuthenticated] != "true" {
		t.Fatalf("attributes %v", attrs)
	}
}

func TestFifoBatchKeepsEntryOrderAndDeduplicatesWithinIt(t *testing.T) {
	t.Parallel()
	e, r, clk := newEngine(t)
	topic, err := e.CreateTopic("t.fifo", map[string]string{AttrFifoTopic: "true", AttrContentBasedDeduplication: "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := e.Subscribe(SubscribeInput{TopicArn: topic.Arn(), Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q.fifo"})
	var entries []BatchEntry
	for i, body := range []string{"a", "b", "a", "c"} {
		entries = append(entries, BatchEntry{ID: strconv.Itoa(i), PublishInput: PublishInput{Message: str(body), GroupID: "g"}})
	}
	ok, failed, err := e.PublishBatch(topic.Arn(), entries)
	if err != nil || len(failed) != 0 || len(ok) != 4 {
		t.Fatalf("%v %v %v", ok, failed, err)
	}
	if ok[2].MessageID != ok[0].MessageID || ok[2].SequenceNumber != ok[0].SequenceNumber {
		t.Fatalf("duplicate in batch answered %+v, first %+v", ok[2], ok[0])
	}
	var bodies string
	for _, m := range r.messages(sub) {
		bodies += m.Body
	}
	if bodies != "abc" {
		t.Fatalf("delivered %q", bodies)
	}
	// The window forgets lazily as the clock moves.
	clk.Advance(DedupWindow)
	if _, err := e.Publish(PublishInput{TopicArn: topic.Arn(), Message: str("a"), GroupID: "g"}); err != nil {
		t.Fatal(err)
	}
	topic.mu.Lock()
	remembered := len(topic.dedup.seen)
	topic.mu.Unlock()
	if len(r.messages(sub)) != 4 || remembered != 1 {
		t.Fatalf("after the window: %d delivered, %d remembered", len(r.messages(sub)), remembered)
	}
}

// TestConcurrentUse exercises every lock path at once; run with -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	e, _, clk := newEngine(t)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				name := fmt.Sprintf("t%d", i%4)
				attrs := map[string]string{}
				if i%4 == 3 {
					name += ".fifo"
					attrs = map[string]string{AttrFifoTopic: "true", AttrContentBasedDeduplication: "true", AttrArchivePolicy: `{"MessageRetentionPeriod":"1"}`}
				}
				topic, err := e.CreateTopic(name, attrs, nil)
				if err != nil {
					t.Error(err)
					return
				}
				sub, err := e.Subscribe(SubscribeInput{TopicArn: topic.Arn(), Protocol: "sqs",
					Endpoint: fmt.Sprintf("arn:aws:sqs:us-east-1:000000000000:q%d-%d", w, i), Attributes: map[string]string{AttrFilterPolicy: `{"k":["v"]}`}})
				if err != nil {
					continue // the topic was deleted meanwhile
				}
				_, _ = e.Publish(PublishInput{TopicArn: topic.Arn(), Message: str(strconv.Itoa(i)), GroupID: "g",
					Attributes: []MessageAttribute{{Name: "k", DataType: str("String"), StringValue: str("v")}}})
				_ = e.SetSubscriptionAttribute(sub, AttrRawMessageDelivery, "true")
				if topic.Fifo() {
					_ = e.SetSubscriptionAttribute(sub, AttrReplayPolicy, `{"PointType":"Timestamp","StartingPoint":"2025-06-01T00:00:00Z"}`)
				}
				_, _, _ = e.ListSubscriptions("")
				_, _ = e.TopicAttributes(topic.Arn())
				_ = e.Unsubscribe(sub)
				if i%10 == 9 {
					_ = e.DeleteTopic(topic.Arn())
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			clk.Advance(time.Minute)
			_, _, _ = e.ListTopics("")
			_ = e.PendingSubscriptions()
		}
	}()
	wg.Wait()
}
