package custom_test

// What another module can do with fanout's public types: implement a clock,
// read an engine's error, use the helper's endpoints.

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/fanouttest"
	"github.com/fanout/fanout/sqs"
)

// frozen is a user's own clock: time stands still and timers never fire.
type frozen struct{ at time.Time }

type never struct{}

func (never) Stop() bool { return true }

func (f frozen) Now() time.Time                              { return f.at }
func (f frozen) AfterFunc(time.Duration, func()) clock.Timer { return never{} }

func TestOwnClockAndErrors(t *testing.T) {
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	srv, err := fanout.New(fanout.Options{Clock: frozen{at}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	q, err := srv.SQS().CreateQueue("q", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(sqs.SendInput{Body: "b"}); err != nil {
		t.Fatal(err)
	}
	page, err := q.Peek(sqs.PeekOptions{})
	if err != nil || len(page.Messages) != 1 || !page.Messages[0].SentAt.Equal(at) {
		t.Fatalf("peek %+v %v", page, err)
	}
	_, err = srv.SQS().Queue("missing")
	var ae *awserr.Error
	if !errors.As(err, &ae) || ae.Code != sqs.ErrQueueDoesNotExist.Code {
		t.Fatalf("error %v", err)
	}
	var kind awserr.Kind = sqs.ErrQueueDoesNotExist
	_ = kind
}

func TestHelperEndpoints(t *testing.T) {
	srv := fanouttest.Start(t)
	var mu sync.Mutex
	var got []string
	url := srv.HTTPEndpoint(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("x-amz-sns-message-type"))
		mu.Unlock()
	}))
	ctx := context.Background()
	n := srv.SNSClient()
	topic, err := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
	srv.Settle()
	if _, err := n.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	srv.Settle()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "Notification" {
		t.Fatalf("endpoint got %v", got)
	}
}
