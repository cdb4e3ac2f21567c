// Command orders builds the classic order-placed fanout with aws-sdk-go-v2:
// one SNS topic, and three SQS queues (fulfillment, inventory, email)
// subscribed to it, each with the queue policy AWS requires before SNS may
// send to it. The email subscription has a filter policy, so it only hears
// about orders from registered customers. It publishes a few orders and
// prints what each consumer received.
//
// It talks to the endpoint given by --endpoint or FANOUT_ENDPOINT, or, with
// neither, starts fanout in-process with queue policies enforced, so a
// missing or wrong policy would show as a queue that receives nothing.
//
//	go run ./examples/orders
//	go run ./examples/orders --endpoint http://127.0.0.1:4566
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "orders:", err)
		os.Exit(1)
	}
}

// order is what the shop publishes when an order is placed.
type order struct {
	ID       string  `json:"orderId"`
	Customer string  `json:"customer"`
	Total    float64 `json:"total"`
}

var orders = []struct {
	order
	customerType string // a message attribute the email subscription filters on
}{
	{order{"1001", "ada@example.com", 42.50}, "registered"},
	{order{"1002", "guest-7f3a", 9.99}, "guest"},
	{order{"1003", "grace@example.com", 120.00}, "registered"},
}

// consumers are the queues subscribed to the topic. Email only wants
// registered customers, and takes the raw message (no SNS envelope).
var consumers = []struct {
	name         string
	filterPolicy string
	raw          bool
}{
	{"fulfillment", "", false},
	{"inventory", "", false},
	{"email", `{"customer_type":["registered"]}`, true},
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("orders", flag.ContinueOnError)
	endpoint := fs.String("endpoint", os.Getenv("FANOUT_ENDPOINT"), "fanout endpoint (FANOUT_ENDPOINT); empty starts fanout in-process")
	keep := fs.Bool("keep", false, "keep the topic, queues and subscriptions instead of deleting them at the end")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" {
		srv, err := fanout.Start(ctx, fanout.Options{EnforcePolicies: true})
		if err != nil {
			return err
		}
		defer srv.Close()
		*endpoint = srv.URL()
		fmt.Fprintln(out, "started fanout in-process (queue policies enforced)")
	}
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}
	snsc := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = endpoint })
	sqsc := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint })

	topic, err := snsc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("order-placed")})
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	topicArn := aws.ToString(topic.TopicArn)
	fmt.Fprintln(out, "topic", topicArn)
	if !*keep {
		defer snsc.DeleteTopic(context.WithoutCancel(ctx), &sns.DeleteTopicInput{TopicArn: topic.TopicArn})
	}

	// Queue names get a per-run suffix: SQS refuses to re-create a queue
	// within 60 seconds of deleting it, and each run deletes its own.
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	queueURLs := map[string]string{}
	for _, c := range consumers {
		url, err := subscribeQueue(ctx, snsc, sqsc, topicArn, "orders-"+c.name+"-"+hex.EncodeToString(suffix), c.filterPolicy, c.raw)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		queueURLs[c.name] = url
		if !*keep {
			defer sqsc.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
		}
		note := ""
		if c.filterPolicy != "" {
			note = " with filter policy " + c.filterPolicy
		}
		fmt.Fprintf(out, "subscribed queue %s%s\n", c.name, note)
	}

	for _, o := range orders {
		body, _ := json.Marshal(o.order)
		res, err := snsc.Publish(ctx, &sns.PublishInput{
			TopicArn: topic.TopicArn,
			Subject:  aws.String("Order placed"),
			Message:  aws.String(string(body)),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"customer_type": {DataType: aws.String("String"), StringValue: aws.String(o.customerType)},
			},
		})
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		fmt.Fprintf(out, "published order %s (%s customer) as message %s\n", o.ID, o.customerType, aws.ToString(res.MessageId))
	}

	for _, c := range consumers {
		want := 0
		for _, o := range orders {
			if c.filterPolicy == "" || o.customerType == "registered" {
				want++
			}
		}
		got, err := receive(ctx, sqsc, queueURLs[c.name], want, c.raw)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		fmt.Fprintf(out, "%s received %d: %s\n", c.name, len(got), strings.Join(got, ", "))
	}
	return nil
}

// subscribeQueue creates the consumer's queue, gives it a policy letting the
// topic (and only it) send to it, and subscribes it.
func subscribeQueue(ctx context.Context, snsc *sns.Client, sqsc *sqs.Client, topicArn, name, filterPolicy string, raw bool) (string, error) {
	q, err := sqsc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		return "", err
	}
	attrs, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", err
	}
	queueArn := attrs.Attributes["QueueArn"]
	// https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Sid":"order-placed","Effect":"Allow",`+
		`"Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Resource":%q,`+
		`"Condition":{"ArnEquals":{"aws:SourceArn":%q}}}]}`, queueArn, topicArn)
	if _, err := sqsc.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: q.QueueUrl, Attributes: map[string]string{"Policy": policy}}); err != nil {
		return "", err
	}
	subAttrs := map[string]string{}
	if filterPolicy != "" {
		subAttrs["FilterPolicy"] = filterPolicy
	}
	if raw {
		subAttrs["RawMessageDelivery"] = "true"
	}
	if _, err := snsc.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"), Endpoint: aws.String(queueArn), Attributes: subAttrs,
	}); err != nil {
		return "", err
	}
	return aws.ToString(q.QueueUrl), nil
}

// receive reads (and deletes) the orders in a queue, waiting a few seconds
// at most for the want it should hold (and a last look for any more), and
// returns their ids in order.
func receive(ctx context.Context, sqsc *sqs.Client, url string, want int, raw bool) ([]string, error) {
	var ids []string
	deadline := time.Now().Add(5 * time.Second)
	for last := false; !last; {
		last = len(ids) >= want || time.Now().After(deadline)
		wait := int32(1)
		if last {
			wait = 0
		}
		out, err := sqsc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: wait})
		if err != nil {
			return nil, err
		}
		for _, m := range out.Messages {
			body := aws.ToString(m.Body)
			if !raw {
				// Enveloped: the order is the envelope's Message.
				var env struct{ Message string }
				if err := json.Unmarshal([]byte(body), &env); err != nil {
					return nil, fmt.Errorf("not an SNS envelope: %s", body)
				}
				body = env.Message
			}
			var o order
			if err := json.Unmarshal([]byte(body), &o); err != nil {
				return nil, fmt.Errorf("not an order: %s", body)
			}
			ids = append(ids, "order "+o.ID)
			if _, err := sqsc.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return nil, err
			}
		}
	}
	sort.Strings(ids) // standard queues do not promise order
	return ids, nil
}
