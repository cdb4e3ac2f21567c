package main

// The test a user of this architecture would write in their own repo: a
// fanout per test from fanouttest, the app's own subscribeQueue to build
// the architecture, and assertions that look at the queues without
// consuming them.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/fanouttest"
)

func TestOrderPlacedFansOutByFilterPolicy(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t, fanouttest.WithOptions(func(o *fanout.Options) { o.EnforcePolicies = true }))
	ctx := context.Background()
	snsc, sqsc := srv.SNSClient(), srv.SQSClient()
	topic, err := snsc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("order-placed")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consumers {
		if _, err := subscribeQueue(ctx, snsc, sqsc, *topic.TopicArn, c.name, c.filterPolicy, c.raw); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	publish := func(id, customerType string) string {
		body, _ := json.Marshal(order{ID: id, Customer: "c", Total: 1})
		out, err := snsc.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(string(body)),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"customer_type": {DataType: aws.String("String"), StringValue: aws.String(customerType)},
			}})
		if err != nil {
			t.Fatal(err)
		}
		return *out.MessageId
	}
	publish("1", "registered")
	guest := publish("2", "guest")

	if n := len(srv.Peek("fulfillment")); n != 2 {
		t.Errorf("fulfillment holds %d orders, want 2", n)
	}
	if n := len(srv.Peek("inventory")); n != 2 {
		t.Errorf("inventory holds %d orders, want 2", n)
	}
	email := srv.Peek("email")
	if len(email) != 1 || email[0].Body != `{"orderId":"1","customer":"c","total":1}` {
		t.Fatalf("email holds %+v, want order 1 raw", email)
	}
	// Why the guest's order did not reach email: the filter policy says.
	for _, r := range srv.Deliveries(guest) {
		switch {
		case r.Endpoint == "arn:aws:sqs:us-east-1:000000000000:email":
			if r.Status != delivery.StatusFiltered || r.Filter == nil {
				t.Errorf("email record %+v", r)
			}
		case r.Status != delivery.StatusDelivered:
			t.Errorf("%s: %s", r.Endpoint, r.Status)
		}
	}
}
