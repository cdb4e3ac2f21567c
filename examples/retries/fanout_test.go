package main

// The test a user would write: an HTTP subscriber that is down, the
// delivery policy's retries run by moving the manual clock, and the message
// found in the subscription's dead-letter queue.

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/fanouttest"
)

func TestRetriesThenDeadLetterOnTheManualClock(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	ctx := context.Background()
	var calls atomic.Int32
	endpoint := srv.HTTPEndpoint(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	snsc := srv.SNSClient()
	topic, err := snsc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("payments")})
	if err != nil {
		t.Fatal(err)
	}
	_, dlqArn, err := createDLQ(ctx, srv.SQSClient(), "payments-dlq", *topic.TopicArn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snsc.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(endpoint),
		Attributes: map[string]string{"DeliveryPolicy": deliveryPolicy, "RedrivePolicy": `{"deadLetterTargetArn":"` + dlqArn + `"}`}}); err != nil {
		t.Fatal(err)
	}
	srv.Settle() // fanouttest confirms the subscription
	pub, err := snsc.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(`{"payment":"p-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Settle()
	if got := srv.Peek("payments-dlq"); len(got) != 0 {
		t.Fatal("dead-lettered before the retries ran")
	}
	srv.Advance(25 * time.Second) // the policy's schedule, with no sleeping
	recs := srv.Deliveries(*pub.MessageId)
	if len(recs) != 1 || recs[0].Status != delivery.StatusDeadLettered || len(recs[0].Attempts) != 4 || calls.Load() != 4 {
		t.Fatalf("records %+v, %d calls", recs, calls.Load())
	}
	if got := srv.Peek("payments-dlq"); len(got) != 1 {
		t.Fatalf("DLQ holds %d messages", len(got))
	}
}
