package topology_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/sdktest"
	"github.com/fanout/fanout/topology"
)

func start(t *testing.T, opts fanout.Options) *fanout.Server {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = clock.NewManual(time.Now())
	}
	srv, err := fanout.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func clients(srv *fanout.Server) (*awssqs.Client, *awssns.Client) {
	cfg := sdktest.Config()
	q := awssqs.NewFromConfig(cfg, func(o *awssqs.Options) { o.BaseEndpoint = aws.String(srv.URL()) })
	n := awssns.NewFromConfig(cfg, func(o *awssns.Options) { o.BaseEndpoint = aws.String(srv.URL()) })
	return q, n
}

func engines(srv *fanout.Server) topology.Engines {
	return topology.Engines{SQS: srv.SQS(), SNS: srv.SNS()}
}

// TestConfigFileServesTheIssueExample loads the file of issue 11 at start
// and checks it with the SDK: attributes, redrive, subscriptions, and a
// filtered publish that reaches only the queue whose policy matches.
func TestConfigFileServesTheIssueExample(t *testing.T) {
	t.Parallel()
	srv := start(t, fanout.Options{ConfigFile: "testdata/issue.yaml"})
	sq, sn := clients(srv)
	ctx := context.Background()

	billing := srv.URL() + "/000000000000/billing"
	got, err := sq.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &billing, AttributeNames: []sqstypes.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Attributes["VisibilityTimeout"]; v != "45" {
		t.Errorf("VisibilityTimeout %q", v)
	}
	if v := got.Attributes["RedrivePolicy"]; v != `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":3}` {
		t.Errorf("RedrivePolicy %s", v)
	}
	ledger := srv.URL() + "/000000000000/ledger.fifo"
	got, err = sq.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &ledger, AttributeNames: []sqstypes.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Attributes["FifoQueue"] != "true" || got.Attributes["ContentBasedDeduplication"] != "true" {
		t.Errorf("ledger.fifo %v", got.Attributes)
	}

	topic := "arn:aws:sns:us-east-1:000000000000:orders"
	subs, err := sn.ListSubscriptionsByTopic(ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: &topic})
	if err != nil {
		t.Fatal(err)
	}
	var endpoints []string
	for _, s := range subs.Subscriptions {
		endpoints = append(endpoints, *s.Protocol+" "+*s.Endpoint)
	}
	want := "sqs arn:aws:sqs:us-east-1:000000000000:billing,sqs arn:aws:sqs:us-east-1:000000000000:shipping,http http://127.0.0.1:9000/hook,lambda arn:aws:lambda:us-east-1:000000000000:function:resize-image"
	if strings.Join(endpoints, ",") != want {
		t.Errorf("subscriptions\n%s\nwant\n%s", strings.Join(endpoints, ","), want)
	}
	attrs, err := sn.GetSubscriptionAttributes(ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: subs.Subscriptions[1].SubscriptionArn})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["RawMessageDelivery"] != "true" || attrs.Attributes["FilterPolicyScope"] != "MessageBody" {
		t.Errorf("shipping subscription %v", attrs.Attributes)
	}

	_, err = sn.Publish(ctx, &awssns.PublishInput{TopicArn: &topic, Message: aws.String(`{"detail":{"kind":"letter"}}`),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"event_type": {DataType: aws.String("String"), StringValue: aws.String("order_placed")},
			"amount":     {DataType: aws.String("Number"), StringValue: aws.String("12")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for queue, n := range map[string]int{"billing": 1, "shipping": 0} {
		url := srv.URL() + "/000000000000/" + queue
		r, err := sq.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) != n {
			t.Errorf("%s received %d messages, want %d", queue, len(r.Messages), n)
		}
	}
}

// TestApplyTwiceChangesNothing: a second apply of the same file reports no
// change, and a changed file reports exactly what differs.
func TestApplyTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	srv := start(t, fanout.Options{})
	top, err := topology.ReadFile("testdata/issue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	first, err := topology.Apply(top, engines(srv), topology.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Changes) != 11 {
		t.Errorf("first apply: %v", first.Changes)
	}
	again, err := topology.Apply(top, engines(srv), topology.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Changes) != 0 {
		t.Errorf("second apply changed %v", again.Changes)
	}

	changed, err := topology.Parse([]byte(`
queues:
  billing:
    attributes: {VisibilityTimeout: 60, DelaySeconds: 0}
    tags: {team: payments}
  extra: {}
topics:
  orders:
    attributes: {DisplayName: Orders}
    subscriptions:
      - queue: billing
        filterPolicy: {event_type: [order_placed, order_cancelled]}
`), "changed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := topology.Apply(changed, engines(srv), topology.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Changes {
		got = append(got, c.String())
	}
	want := []string{
		"update queue billing (VisibilityTimeout)",
		"tag queue billing (team)",
		"create queue extra",
		"update topic orders (DisplayName)",
		"update subscription orders sqs arn:aws:sqs:us-east-1:000000000000:billing (FilterPolicy)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r, err = topology.Apply(changed, engines(srv), topology.ApplyOptions{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, c := range r.Changes {
		got = append(got, c.String())
	}
	want = []string{
		"unsubscribe subscription orders http http://127.0.0.1:9000/hook",
		"unsubscribe subscription orders lambda arn:aws:lambda:us-east-1:000000000000:function:resize-image",
		"unsubscribe subscription orders sqs arn:aws:sqs:us-east-1:000000000000:shipping",
		"delete topic orders.fifo",
		"delete queue ledger.fifo",
		"delete queue orders-dlq",
		"delete queue shipping",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("prune:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if names := srv.SQS().ListQueues(""); strings.Join(names, ",") != "billing,extra" {
		t.Errorf("queues after prune: %v", names)
	}
}
