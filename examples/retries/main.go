// Command retries shows SNS's failure path with aws-sdk-go-v2: an HTTP
// endpoint that is down, a subscription with a short custom DeliveryPolicy
// and a RedrivePolicy dead-letter queue. It publishes one message, moves
// fanout's clock past the whole retry schedule with POST /_fanout/clock,
// and prints each attempt from GET /_fanout/deliveries and the message
// found in the dead-letter queue.
//
// It talks to the endpoint given by --endpoint or FANOUT_ENDPOINT, or, with
// neither, starts fanout in-process on a manual clock. The HTTP endpoint is
// a local server this program runs on 127.0.0.1: it confirms the
// subscription, then answers 503 to every notification.
//
//	go run ./examples/retries
//	go run ./examples/retries --endpoint http://127.0.0.1:4566
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "retries:", err)
		os.Exit(1)
	}
}

// deliveryPolicy gives up quickly: 4 attempts, at +0 s, +0 s (the one
// immediate retry), +10 s and +25 s (two linear backoff steps from 5 s to
// 15 s). AWS's default for HTTP/S is 4 attempts 20 s apart.
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html
const deliveryPolicy = `{"healthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":15,"numRetries":3,"numNoDelayRetries":1,"backoffFunction":"linear"}}`

// policyTime is the sum of the policy's delays.
const policyTime = "25s"

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("retries", flag.ContinueOnError)
	endpoint := fs.String("endpoint", os.Getenv("FANOUT_ENDPOINT"), "fanout endpoint (FANOUT_ENDPOINT); empty starts fanout in-process on a manual clock")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" {
		srv, err := fanout.Start(ctx, fanout.Options{Clock: clock.NewManual(time.Now())})
		if err != nil {
			return err
		}
		defer srv.Close()
		*endpoint = srv.URL()
		fmt.Fprintln(out, "started fanout in-process on a manual clock")
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	snsc := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = endpoint })
	sqsc := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint })

	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := "payments-" + hex.EncodeToString(suffix)

	hook, err := startDownEndpoint()
	if err != nil {
		return err
	}
	defer hook.close()
	fmt.Fprintln(out, "HTTP endpoint", hook.url, "is down: it answers 503 to notifications")

	topic, err := snsc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name)})
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	defer snsc.DeleteTopic(context.WithoutCancel(ctx), &sns.DeleteTopicInput{TopicArn: topic.TopicArn})
	dlqURL, dlqArn, err := createDLQ(ctx, sqsc, name+"-dlq", aws.ToString(topic.TopicArn))
	if err != nil {
		return err
	}
	defer sqsc.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: aws.String(dlqURL)})

	if _, err := snsc.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(hook.url),
		Attributes: map[string]string{
			"DeliveryPolicy": deliveryPolicy,
			"RedrivePolicy":  `{"deadLetterTargetArn":"` + dlqArn + `"}`,
		},
	}); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	// SNS posts a SubscriptionConfirmation; the endpoint confirms it with
	// the token, as an application would.
	var token string
	select {
	case token = <-hook.tokens:
	case <-time.After(30 * time.Second):
		return errors.New("no SubscriptionConfirmation arrived")
	}
	sub, err := snsc.ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: aws.String(token)})
	if err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	subArn := aws.ToString(sub.SubscriptionArn)
	fmt.Fprintln(out, "subscription confirmed with DeliveryPolicy", deliveryPolicy)

	pub, err := snsc.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(`{"payment":"p-1","amount":25}`)})
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	fmt.Fprintln(out, "published message", aws.ToString(pub.MessageId))

	// Move fanout's clock past the schedule; the answer comes once every
	// attempt that fell due has run.
	if err := postClock(*endpoint, policyTime); err != nil {
		return err
	}
	fmt.Fprintln(out, "advanced the clock by", policyTime)

	rec, err := deliveryOf(*endpoint, subArn)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "delivery %s after %d attempts:\n", rec.Status, rec.AttemptCount)
	for _, a := range rec.Attempts {
		fmt.Fprintf(out, "  attempt %d at +%v: %s (HTTP %d)\n", a.Number, a.Time.Sub(rec.Created).Round(time.Millisecond), a.Outcome, a.HTTPStatus)
	}

	// A short poll: the message is there once the clock call has answered
	// (and a long poll would wait on the manual clock).
	msgs, err := sqsc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL)})
	if err != nil {
		return fmt.Errorf("receive from the DLQ: %w", err)
	}
	if len(msgs.Messages) != 1 {
		return fmt.Errorf("the DLQ holds %d messages, want 1", len(msgs.Messages))
	}
	var env struct{ Type, MessageId, Message string }
	if err := json.Unmarshal([]byte(aws.ToString(msgs.Messages[0].Body)), &env); err != nil {
		return fmt.Errorf("DLQ body is not an SNS envelope: %w", err)
	}
	fmt.Fprintf(out, "dead-letter queue holds %s %s: %s\n", env.Type, env.MessageId, env.Message)
	return nil
}

// downEndpoint is the subscriber: it passes on confirmation tokens and
// fails every notification with 503.
type downEndpoint struct {
	url    string
	tokens chan string
	srv    *http.Server
}

func startDownEndpoint() (*downEndpoint, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &downEndpoint{url: "http://" + l.Addr().String() + "/payments", tokens: make(chan string, 4)}
	d.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-amz-sns-message-type") == "SubscriptionConfirmation" {
			var m struct{ Token string }
			_ = json.NewDecoder(r.Body).Decode(&m)
			d.tokens <- m.Token
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	go func() { _ = d.srv.Serve(l) }()
	return d, nil
}

func (d *downEndpoint) close() { _ = d.srv.Close() }

// createDLQ creates the dead-letter queue with a policy that lets the
// topic send to it, as AWS requires.
func createDLQ(ctx context.Context, sqsc *sqs.Client, name, topicArn string) (url, arn string, err error) {
	q, err := sqsc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		return "", "", fmt.Errorf("create DLQ: %w", err)
	}
	attrs, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", err
	}
	arn = attrs.Attributes["QueueArn"]
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},` +
		`"Action":"sqs:SendMessage","Resource":"` + arn + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + topicArn + `"}}}]}`
	if _, err := sqsc.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: q.QueueUrl, Attributes: map[string]string{"Policy": policy}}); err != nil {
		return "", "", err
	}
	return aws.ToString(q.QueueUrl), arn, nil
}

// postClock moves fanout's clock: POST /_fanout/clock {"advance":"25s"}.
func postClock(endpoint, d string) error {
	resp, err := http.Post(endpoint+"/_fanout/clock", "application/json", strings.NewReader(`{"advance":"`+d+`"}`))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST /_fanout/clock: %s %s", resp.Status, b)
	}
	return nil
}

// record is the part of a GET /_fanout/deliveries entry this program prints.
type record struct {
	Status       string
	Created      time.Time
	AttemptCount int
	Attempts     []struct {
		Number     int
		Time       time.Time
		Outcome    string
		HTTPStatus int
	}
}

// deliveryOf returns the subscription's notification delivery.
func deliveryOf(endpoint, subArn string) (record, error) {
	resp, err := http.Get(endpoint + "/_fanout/deliveries?type=Notification&subscription=" + subArn)
	if err != nil {
		return record{}, err
	}
	defer resp.Body.Close()
	var out struct{ Deliveries []record }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return record{}, err
	}
	if len(out.Deliveries) != 1 {
		return record{}, fmt.Errorf("%d deliveries listed, want 1", len(out.Deliveries))
	}
	return out.Deliveries[0], nil
}
