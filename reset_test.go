package fanout_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/sdktest"
)

// TestResetDuringLongPolls fills a server with queues, a topic, a failing
// HTTP subscription with retries pending and long polls waiting, resets it
// through POST /_fanout/reset, and checks with SDK clients that it is new.
func TestResetDuringLongPolls(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := fanout.Start(context.Background(), fanout.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cfg := sdktest.Config()
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	n := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) })

	var hits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()

	url, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String("old")}); err != nil {
		t.Fatal(err)
	}
	empty, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("waiting")})
	if err != nil {
		t.Fatal(err)
	}
	topic, err := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(down.URL),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	// The confirmation to the endpoint fails and is retried on the clock.
	if err := s.Deliveries().Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Deliveries().Scheduled() == 0 {
		t.Fatal("no retry pending before the reset")
	}

	polls := make(chan error, 3)
	for range 3 {
		go func() {
			out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: empty.QueueUrl, WaitTimeSeconds: 20})
			if err == nil && len(out.Messages) > 0 {
				err = errors.New("a long poll returned messages")
			}
			polls <- err
		}()
	}
	waitFor(t, func() bool { return clk.Pending() >= 3+int(s.Deliveries().Scheduled()) }) // the polls wait on the clock

	var status struct{ Status string }
	if code := getJSON(t, "POST", s.URL()+"/_fanout/reset", "", &status); code != 200 || status.Status != "ok" {
		t.Fatalf("reset: %d %+v", code, status)
	}
	for range 3 {
		select {
		case err := <-polls:
			if err != nil {
				t.Fatalf("long poll across the reset: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a long poll outlived the reset")
		}
	}

	lq, err := q.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil || len(lq.QueueUrls) != 0 {
		t.Fatalf("queues after reset: %v, %v", lq.QueueUrls, err)
	}
	if _, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders")}); !errors.As(err, new(*sqstypes.QueueDoesNotExist)) {
		t.Fatalf("GetQueueUrl after reset: %v", err)
	}
	lt, err := n.ListTopics(ctx, &sns.ListTopicsInput{})
	if err != nil || len(lt.Topics) != 0 {
		t.Fatalf("topics after reset: %v, %v", lt.Topics, err)
	}
	ls, err := n.ListSubscriptions(ctx, &sns.ListSubscriptionsInput{})
	if err != nil || len(ls.Subscriptions) != 0 {
		t.Fatalf("subscriptions after reset: %v, %v", ls.Subscriptions, err)
	}
	if st := s.Deliveries().Stats(); s.Deliveries().Scheduled() != 0 || st.Failed != 0 || len(st.Subscriptions) != 0 {
		t.Fatalf("deliveries after reset: scheduled %d, %+v", s.Deliveries().Scheduled(), st)
	}
	if clk.Pending() != 0 {
		t.Fatalf("%d timers left on the clock", clk.Pending())
	}

	// The name can be used again at once (no QueueDeletedRecently), empty.
	url, err = q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl})
	if err != nil || len(got.Messages) != 0 {
		t.Fatalf("re-created queue: %v, %v", got.Messages, err)
	}
	// The retries were cancelled: time passing calls the endpoint no more.
	before := hits.Load()
	clk.Advance(24 * time.Hour)
	if err := s.Deliveries().Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != before {
		t.Fatalf("the endpoint was called %d more times after the reset", hits.Load()-before)
	}
}

func TestResetEndpoints(t *testing.T) {
	t.Parallel()
	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SQS().CreateQueue("q", nil, nil); err != nil {
		t.Fatal(err)
	}
	var status struct{ Status, Error string }
	if code := getJSON(t, "POST", s.URL()+"/moto-api/reset", "", &status); code != 200 || status.Status != "ok" {
		t.Fatalf("moto reset: %d %+v", code, status)
	}
	if qs := s.SQS().ListQueues(""); len(qs) != 0 {
		t.Fatalf("queues after moto's reset: %v", qs)
	}
	if _, err := s.SQS().CreateQueue("kept", nil, nil); err != nil {
		t.Fatal(err)
	}
	if code := getJSON(t, "GET", s.URL()+"/_fanout/reset", "", nil); code < 400 || len(s.SQS().ListQueues("")) != 1 {
		t.Fatalf("GET /_fanout/reset: %d, and it reset", code) // only POST resets
	}
	if code := getJSON(t, "POST", s.URL()+"/_fanout/reset?account=1", "", &status); code != 400 || status.Error == "" {
		t.Fatalf("reset with a parameter: %d %+v", code, status)
	}
}

// waitFor polls cond: what it waits for happens on other goroutines, not on
// the clock.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
