// Command fifo delivers an SNS FIFO topic to an SQS FIFO queue with
// aws-sdk-go-v2: order events of two customers, published interleaved,
// come out of the queue in order per customer (the message group), and a
// duplicate publish within five minutes is delivered once.
//
// It talks to the endpoint given by --endpoint or FANOUT_ENDPOINT, or, with
// neither, starts fanout in-process.
//
//	go run ./examples/fifo
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fifo:", err)
		os.Exit(1)
	}
}

// event is one publish: a customer's order event, the customer as the
// message group.
type event struct{ customer, body string }

var events = []event{
	{"ada", "ada: created"}, {"grace", "grace: created"}, {"ada", "ada: paid"},
	{"grace", "grace: paid"}, {"ada", "ada: paid"}, // a retried publish: deduplicated
	{"ada", "ada: shipped"},
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fifo", flag.ContinueOnError)
	endpoint := fs.String("endpoint", os.Getenv("FANOUT_ENDPOINT"), "fanout endpoint (FANOUT_ENDPOINT); empty starts fanout in-process")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" {
		srv, err := fanout.Start(ctx, fanout.Options{NoRecreateWait: true})
		if err != nil {
			return err
		}
		defer srv.Close()
		*endpoint = srv.URL()
		fmt.Fprintln(out, "started fanout in-process")
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	snsc := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = endpoint })
	sqsc := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint })

	topicArn, queueURL, err := setUp(ctx, snsc, sqsc, "order-events.fifo")
	if err != nil {
		return err
	}
	defer snsc.DeleteTopic(context.WithoutCancel(ctx), &sns.DeleteTopicInput{TopicArn: aws.String(topicArn)})
	defer sqsc.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: aws.String(queueURL)})
	fmt.Fprintln(out, "FIFO topic", topicArn, "delivers to FIFO queue", queueURL)

	for _, e := range events {
		if err := publish(ctx, snsc, topicArn, e); err != nil {
			return err
		}
	}
	got, err := drain(ctx, sqsc, queueURL)
	if err != nil {
		return err
	}
	for _, c := range []string{"ada", "grace"} {
		var bodies []string
		for _, b := range got {
			if strings.HasPrefix(b, c+":") {
				bodies = append(bodies, b)
			}
		}
		fmt.Fprintf(out, "%s, in order: %s\n", c, strings.Join(bodies, ", "))
	}
	fmt.Fprintf(out, "published %d, received %d (the duplicate was dropped)\n", len(events), len(got))
	return nil
}

// setUp creates the FIFO topic and queue (content-based deduplication on
// the topic) and subscribes the queue with raw delivery.
func setUp(ctx context.Context, snsc *sns.Client, sqsc *sqs.Client, name string) (topicArn, queueURL string, err error) {
	topic, err := snsc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name),
		Attributes: map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"}})
	if err != nil {
		return "", "", fmt.Errorf("create topic: %w", err)
	}
	q, err := sqsc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		return "", "", fmt.Errorf("create queue: %w", err)
	}
	attrs, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", err
	}
	if _, err := snsc.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String(attrs.Attributes["QueueArn"]), Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		return "", "", fmt.Errorf("subscribe: %w", err)
	}
	return *topic.TopicArn, *q.QueueUrl, nil
}

func publish(ctx context.Context, snsc *sns.Client, topicArn string, e event) error {
	_, err := snsc.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicArn), Message: aws.String(e.body), MessageGroupId: aws.String(e.customer)})
	if err != nil {
		return fmt.Errorf("publish %q: %w", e.body, err)
	}
	return nil
}

// drain receives and deletes every message, in the order the queue hands
// them out (a group's next message comes only once its last was deleted).
func drain(ctx context.Context, sqsc *sqs.Client, url string) ([]string, error) {
	var bodies []string
	for {
		out, err := sqsc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			return nil, err
		}
		if len(out.Messages) == 0 {
			return bodies, nil
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			if _, err := sqsc.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return nil, err
			}
		}
	}
}
