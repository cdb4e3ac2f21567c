package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

// TestTopologyFile loads topology.yaml and checks, with the SDK, that the
// subscription carries main.go's delivery policy and dead-letter queue.
func TestTopologyFile(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := fanout.Start(ctx, fanout.Options{Clock: clock.NewManual(time.Now()), ConfigFile: "topology.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	endpoint := srv.URL()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	snsc := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = &endpoint })
	subs, err := snsc.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:payments")})
	if err != nil {
		t.Fatal(err)
	}
	if len(subs.Subscriptions) != 1 || aws.ToString(subs.Subscriptions[0].Endpoint) != "http://127.0.0.1:9999/notifications" {
		t.Fatalf("subscriptions %+v", subs.Subscriptions)
	}
	pending := srv.SNS().PendingSubscriptions()
	if len(pending) != 1 {
		t.Fatalf("pending %v", pending)
	}
	attrs, err := snsc.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: &pending[0].SubscriptionArn})
	if err != nil {
		t.Fatal(err)
	}
	if got := attrs.Attributes["DeliveryPolicy"]; !strings.Contains(got, `"numNoDelayRetries":1`) {
		t.Errorf("DeliveryPolicy %s", got)
	}
	if got := attrs.Attributes["RedrivePolicy"]; got != `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:payments-dlq"}` {
		t.Errorf("RedrivePolicy %s", got)
	}
}
