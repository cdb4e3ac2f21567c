package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fanout/fanout/internal/sdktest"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
)

// env is a fanout server and SDK clients for it.
type env struct {
	srv *fanout.Server
	sns *sns.Client
	sqs *sqs.Client
	clk *clock.Manual // nil on the shared server
}

var (
	sharedOnce sync.Once
	sharedEnv  *env
)

// shared returns a server many tests use at once, each with its own names.
// It lives as long as the test binary.
func shared(t *testing.T) *env {
	t.Helper()
	sharedOnce.Do(func() {
		s, err := fanout.Start(context.Background(), fanout.Options{})
		if err != nil {
			panic(err)
		}
		sharedEnv = clients(s, nil)
	})
	return sharedEnv
}

// start runs a server of the test's own, stopped when the test ends.
func start(t *testing.T, opts fanout.Options) *env {
	t.Helper()
	var clk *clock.Manual
	if opts.Clock == nil {
		clk = clock.NewManual(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
		opts.Clock = clk
	}
	s, err := fanout.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return clients(s, clk)
}

func clients(s *fanout.Server, clk *clock.Manual) *env {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		HTTPClient:  sdktest.HTTPClient(),
		// The SDK's default retryer stays on: with retries off, a client-side race
		// in smithy-go (aws/aws-sdk-go-v2#2737) surfaces as a "use of closed network
		// connection" on fast loopback servers. It never retries the 4xx errors tested.
	}
	return &env{
		srv: s,
		sns: sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) }),
		sqs: sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) }),
		clk: clk,
	}
}

var nameSeq atomic.Int64

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// name returns a topic or queue name unique in the test binary.
func name(t *testing.T, what string) string {
	base := unsafeName.ReplaceAllString(t.Name(), "-")
	if len(base) > 40 {
		base = base[len(base)-40:]
	}
	return fmt.Sprintf("%s-%s-%d", strings.Trim(base, "-"), what, nameSeq.Add(1))
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func (e *env) topic(t *testing.T, what string, attrs map[string]string) string {
	t.Helper()
	n := name(t, what)
	if attrs["FifoTopic"] == "true" {
		n += ".fifo"
	}
	out, err := e.sns.CreateTopic(ctx(t), &sns.CreateTopicInput{Name: aws.String(n), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateTopic %s: %v", n, err)
	}
	return aws.ToString(out.TopicArn)
}

// queue is a queue a test created: its URL and ARN.
type queue struct{ URL, ARN string }

func (e *env) queue(t *testing.T, what string, attrs map[string]string) queue {
	t.Helper()
	n := name(t, what)
	if attrs["FifoQueue"] == "true" {
		n += ".fifo"
	}
	out, err := e.sqs.CreateQueue(ctx(t), &sqs.CreateQueueInput{QueueName: aws.String(n), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", n, err)
	}
	return queue{URL: aws.ToString(out.QueueUrl), ARN: "arn:aws:sqs:us-east-1:000000000000:" + n}
}

func (e *env) subscribe(t *testing.T, topicArn string, q queue, attrs map[string]string) string {
	t.Helper()
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{
		TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
		Attributes: attrs, ReturnSubscriptionArn: true,
	})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	return aws.ToString(out.SubscriptionArn)
}

func (e *env) publish(t *testing.T, in *sns.PublishInput) *sns.PublishOutput {
	t.Helper()
	out, err := e.sns.Publish(ctx(t), in)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return out
}

// drain receives every message in q (SNS delivers before Publish returns,
// so a short poll sees them all), deleting none.
func (e *env) drain(t *testing.T, q queue) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		out, err := e.sqs.ReceiveMessage(ctx(t), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, VisibilityTimeout: 600,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"},
		})
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		all = append(all, out.Messages...)
	}
}

// bodies returns the message bodies, or for enveloped ones the Message.
func bodies(t *testing.T, msgs []sqstypes.Message, enveloped bool) []string {
	t.Helper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = aws.ToString(m.Body)
		if enveloped {
			out[i] = envelopeOf(t, m)["Message"].(string)
		}
	}
	return out
}

func envelopeOf(t *testing.T, m sqstypes.Message) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
		t.Fatalf("body is not an SNS envelope: %v\n%s", err, aws.ToString(m.Body))
	}
	return env
}

// apiError is the code, message and HTTP status of an SDK error.
type apiError struct {
	Code, Message string
	Status        int
}

func errorOf(t *testing.T, err error) apiError {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an API error: %v", err)
	}
	out := apiError{Code: ae.ErrorCode(), Message: ae.ErrorMessage()}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		out.Status = re.HTTPStatusCode()
	}
	return out
}

// wantError checks an SDK error's code, status and message.
func wantError(t *testing.T, err error, code string, status int, msg string) {
	t.Helper()
	got := errorOf(t, err)
	if got.Code != code || got.Status != status || got.Message != msg {
		t.Fatalf("error = %s %d %q\nwant    %s %d %q", got.Code, got.Status, got.Message, code, status, msg)
	}
}

// stats reads GET /_fanout/sns/deliveries.
func (e *env) stats(t *testing.T) delivery.Stats {
	t.Helper()
	resp, err := http.Get(e.srv.URL() + "/_fanout/sns/deliveries")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s delivery.Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// subStats returns the counts of one subscription.
func (e *env) subStats(t *testing.T, subArn string) delivery.SubscriptionCounts {
	t.Helper()
	for _, c := range e.stats(t).Subscriptions {
		if c.SubscriptionArn == subArn {
			return c
		}
	}
	return delivery.SubscriptionCounts{}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// allowSNS is a queue policy letting topicArn send to q, as AWS's guide
// writes it.
func allowSNS(q queue, topicArn string) string {
	return `{"Version":"2012-10-17","Statement":[{"Sid":"topic","Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},` +
		`"Action":"sqs:SendMessage","Resource":"` + q.ARN + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + topicArn + `"}}}]}`
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
