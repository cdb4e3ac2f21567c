package fanouttest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/fanouttest"
	"github.com/fanout/fanout/sqs"
	"github.com/fanout/fanout/topology"
)

var ctx = context.Background()

// must returns v, or ends the test binary on an error no test expects.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// queueWithTopic makes a queue subscribed (raw) to a new topic, with the
// policy AWS requires, and returns the queue URL and the topic ARN.
func queueWithTopic(t *testing.T, srv *fanouttest.Server, name string, filter string) (string, string) {
	t.Helper()
	q, n := srv.SQSClient(), srv.SNSClient()
	url := must(q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name)})).QueueUrl
	topic := must(n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name + "-topic")})).TopicArn
	attrs := map[string]string{"RawMessageDelivery": "true"}
	if filter != "" {
		attrs["FilterPolicy"] = filter
	}
	arn := "arn:aws:sqs:" + srv.Region() + ":" + srv.Account() + ":" + name
	must(n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic, Protocol: aws.String("sqs"), Endpoint: aws.String(arn), Attributes: attrs}))
	return *url, *topic
}

func TestClientsAndPeek(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	url, topic := queueWithTopic(t, srv, "orders", "")
	must(srv.SNSClient().Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(`{"id":1}`),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("order")}}}))
	if _, err := srv.SQSClient().SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("later"), DelaySeconds: 60}); err != nil {
		t.Fatal(err)
	}

	for range 2 { // peeking twice sees the same: it changes nothing
		msgs := srv.Peek("orders")
		if len(msgs) != 2 || msgs[0].Body != `{"id":1}` || msgs[0].State != sqs.MessageVisible {
			t.Fatalf("peek = %+v", msgs)
		}
		if len(msgs[0].MessageAttributes) != 1 || msgs[0].MessageAttributes[0].StringValue != "order" || msgs[0].ReceiveCount != 0 {
			t.Fatalf("first message %+v", msgs[0])
		}
		if msgs[1].State != sqs.MessageDelayed || !msgs[1].StateEnds.Equal(srv.Now().Add(time.Minute)) {
			t.Fatalf("delayed message %+v", msgs[1])
		}
	}
	if got := srv.Peek(url, sqs.MessageDelayed); len(got) != 1 || got[0].Body != "later" { // a URL works too
		t.Fatalf("delayed only = %+v", got)
	}
	rec := must(srv.SQSClient().ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url),
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"ApproximateReceiveCount"}}))
	if len(rec.Messages) != 1 || rec.Messages[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("receive after peeks = %+v", rec.Messages)
	}
}

func TestAdvanceOnTheManualClock(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	srv := fanouttest.Start(t, fanouttest.WithStartTime(start))
	if _, ok := srv.Clock().(*clock.Manual); !ok || !srv.Now().Equal(start) {
		t.Fatalf("clock %T at %v", srv.Clock(), srv.Now())
	}
	q := srv.SQSClient()
	url := must(q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("jobs"),
		Attributes: map[string]string{"VisibilityTimeout": "30"}})).QueueUrl
	must(q.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("job")}))
	if got := must(q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})); len(got.Messages) != 1 {
		t.Fatal("not received")
	}
	srv.Advance(29 * time.Second)
	if got := srv.Peek("jobs", sqs.MessageInflight); len(got) != 1 {
		t.Fatalf("in flight after 29s: %+v", got)
	}
	srv.Advance(time.Second)
	if got := srv.Peek("jobs", sqs.MessageVisible); len(got) != 1 || got[0].ReceiveCount != 1 {
		t.Fatalf("visible after 30s: %+v", got)
	}
	if !srv.Now().Equal(start.Add(30 * time.Second)) {
		t.Fatalf("now %v", srv.Now())
	}
	// A long poll ends when the clock passes its wait, not the wall clock.
	done := make(chan int)
	must(q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})) // empty the queue
	go func() {
		out, _ := q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 20})
		done <- len(out.Messages)
	}()
	waitUntil(t, func() bool { return srv.Clock().(*clock.Manual).Pending() > 0 })
	srv.Advance(20 * time.Second)
	if n := <-done; n != 0 {
		t.Fatalf("long poll got %d", n)
	}
}

func TestRealTime(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t, fanouttest.WithRealTime())
	if _, ok := srv.Clock().(*clock.Adjustable); !ok {
		t.Fatalf("clock %T", srv.Clock())
	}
	before := time.Now()
	srv.Advance(time.Hour)
	if srv.Now().Sub(before) < time.Hour {
		t.Fatalf("Advance did not move real time: %v", srv.Now())
	}
}

func TestWaitForMessages(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	url, _ := queueWithTopic(t, srv, "inbox", "")
	go func() {
		for i := range 3 {
			time.Sleep(5 * time.Millisecond) // another goroutine, later
			_, _ = srv.SQSClient().SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(fmt.Sprint(i))})
		}
	}()
	msgs := srv.WaitForMessages("inbox", 3, 10*time.Second)
	if len(msgs) != 3 || msgs[0].Body != "0" {
		t.Fatalf("got %+v", msgs)
	}
	if !srv.HasMessages("inbox", 3)() || srv.HasMessages("inbox", 4)() || len(srv.Messages("inbox")()) != 3 {
		t.Fatal("HasMessages/Messages disagree with the queue")
	}
	if srv.HasMessages("nowhere", 1)() {
		t.Fatal("a missing queue has messages")
	}
}

// fakeTB records failures instead of failing, to test the helper's own.
type fakeTB struct {
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}

func TestFailuresNameTheQueue(t *testing.T) {
	t.Parallel()
	ft := &fakeTB{}
	srv := fanouttest.Start(ft)
	defer func() {
		for _, c := range ft.cleanups {
			c()
		}
	}()
	srv.Peek("missing")
	must(srv.SQSClient().CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("empty")}))
	srv.WaitForMessages("empty", 1, 10*time.Millisecond)
	srv.WaitForMessages("missing", 1, time.Millisecond)
	want := []string{"peek missing: ", "empty holds 0 visible messages after 10ms, want 1", "waiting for 1 messages in missing: "}
	if len(ft.failures) != len(want) {
		t.Fatalf("failures %q", ft.failures)
	}
	for i, w := range want {
		if !strings.Contains(ft.failures[i], w) {
			t.Errorf("failure %q lacks %q", ft.failures[i], w)
		}
	}
}

func TestDeliveriesExplainFilteredOutSubscriptions(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	_, topic := queueWithTopic(t, srv, "eu-orders", `{"region":["eu-west-1"]}`)
	out := must(srv.SNSClient().Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("order"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"region": {DataType: aws.String("String"), StringValue: aws.String("us-east-1")}}}))
	recs := srv.Deliveries(*out.MessageId)
	if len(recs) != 1 || recs[0].Status != delivery.StatusFiltered || recs[0].Filter == nil || recs[0].FilterPolicy == "" {
		t.Fatalf("records %+v", recs)
	}
	if len(srv.Peek("eu-orders")) != 0 {
		t.Fatal("a filtered-out message reached the queue")
	}
}

func TestHTTPEndpoint(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	var mu sync.Mutex
	var got []string
	fail := atomic.Bool{}
	fail.Store(true)
	url := srv.HTTPEndpoint(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		mu.Lock()
		got = append(got, r.Header.Get("x-amz-sns-message-type")+" "+string(b))
		mu.Unlock()
	}))
	n := srv.SNSClient()
	topic := must(n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("hooks")})).TopicArn
	sub := must(n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic, Protocol: aws.String("http"), Endpoint: aws.String(url),
		Attributes: map[string]string{"RawMessageDelivery": "true"}, ReturnSubscriptionArn: true}))
	srv.Settle() // the helper confirms the subscription
	attrs := must(n.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: sub.SubscriptionArn}))
	if attrs.Attributes["PendingConfirmation"] != "false" {
		t.Fatalf("subscription not confirmed: %v", attrs.Attributes)
	}
	pub := must(n.Publish(ctx, &sns.PublishInput{TopicArn: topic, Message: aws.String("hello")}))
	srv.Settle()
	recs := srv.Deliveries(*pub.MessageId)
	if len(recs) != 1 || recs[0].Status != delivery.StatusRetrying || len(recs[0].Attempts) != 1 || recs[0].Attempts[0].HTTPStatus != 500 {
		t.Fatalf("after a 500: %+v", recs)
	}
	fail.Store(false)
	srv.Advance(time.Minute) // the HTTP schedule's first retries fall within it
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "Notification hello" {
		t.Fatalf("endpoint got %q", got)
	}
	if recs := srv.Deliveries(*pub.MessageId); recs[0].Status != delivery.StatusDelivered {
		t.Fatalf("after the retry: %+v", recs[0])
	}
}

func TestLambdaFunction(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	var calls atomic.Int32
	var last fanouttest.SNSEvent
	var mu sync.Mutex
	arn := srv.LambdaFunction(t, "billing", func(ctx context.Context, ev fanouttest.SNSEvent) error {
		mu.Lock()
		last = ev
		mu.Unlock()
		if calls.Add(1) <= 3 {
			return errors.New("the first three calls fail")
		}
		return nil
	})
	if arn != "arn:aws:lambda:us-east-1:000000000000:function:billing" {
		t.Fatalf("arn %s", arn)
	}
	n := srv.SNSClient()
	topic := must(n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("bills")})).TopicArn
	must(n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic, Protocol: aws.String("lambda"), Endpoint: aws.String(arn)}))
	pub := must(n.Publish(ctx, &sns.PublishInput{TopicArn: topic, Message: aws.String("invoice"), Subject: aws.String("s")}))
	srv.Settle()
	if calls.Load() == 0 {
		t.Fatal("not invoked")
	}
	srv.Advance(time.Hour) // the Lambda schedule retries within it
	if calls.Load() != 4 {
		t.Fatalf("%d calls after the retries", calls.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(last.Records) != 1 || last.Records[0].SNS.Message != "invoice" || last.Records[0].SNS.MessageID != *pub.MessageId ||
		last.Records[0].SNS.Subject != "s" || last.Records[0].EventSource != "aws:sns" {
		t.Fatalf("event %+v", last)
	}
	recs := srv.Deliveries(*pub.MessageId)
	if len(recs) != 1 || recs[0].Status != delivery.StatusDelivered || len(recs[0].Attempts) != 4 || recs[0].Attempts[0].Error == "" {
		t.Fatalf("records %+v", recs)
	}
}

func TestResetAndTopology(t *testing.T) {
	t.Parallel()
	topo := &topology.Topology{
		Queues: map[string]topology.Queue{"billing": {}},
		Topics: map[string]topology.Topic{"orders": {Subscriptions: []topology.Subscription{{Queue: "billing", Raw: true}}}},
	}
	srv := fanouttest.Start(t, fanouttest.WithTopology(topo), fanouttest.WithOptions(func(o *fanout.Options) { o.Region = "eu-west-1" }))
	if srv.Region() != "eu-west-1" {
		t.Fatalf("region %s", srv.Region())
	}
	topic := "arn:aws:sns:eu-west-1:000000000000:orders"
	publish := func() {
		must(srv.SNSClient().Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")}))
	}
	publish()
	must(srv.SQSClient().CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("extra")}))
	if len(srv.Peek("billing")) != 1 {
		t.Fatal("topology not applied")
	}
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := srv.Peek("billing"); len(got) != 0 {
		t.Fatalf("billing after reset: %+v", got)
	}
	if qs := must(srv.SQSClient().ListQueues(ctx, &awssqs.ListQueuesInput{})); len(qs.QueueUrls) != 1 {
		t.Fatalf("queues after reset: %v", qs.QueueUrls) // billing only
	}
	publish() // the topology's subscription is back
	if len(srv.Peek("billing")) != 1 {
		t.Fatal("topology not re-created by Reset")
	}
}

// Many servers at once: no state is shared between them.
func TestParallelServers(t *testing.T) {
	t.Parallel()
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			srv := fanouttest.Start(t)
			url := must(srv.SQSClient().CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("same-name")})).QueueUrl
			for range i + 1 {
				must(srv.SQSClient().SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("m")}))
			}
			srv.Advance(time.Duration(i) * time.Minute)
			if got := srv.Peek("same-name"); len(got) != i+1 {
				t.Fatalf("server %d holds %d messages", i, len(got))
			}
		})
	}
}

func TestRunAndClose(t *testing.T) {
	t.Parallel()
	srv, err := fanouttest.Run()
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	srv.Close()
	srv.Close() // twice is fine
	if _, err := http.Get(url + "/_fanout/health"); err == nil {
		t.Fatal("server still answers after Close")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Peek of a missing queue on a Run server did not panic")
		}
	}()
	srv.Peek("missing")
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkStartStop is one test's server: start on a free port, one SDK
// call, stop.
func BenchmarkStartStop(b *testing.B) {
	for b.Loop() {
		srv, err := fanouttest.Run()
		if err != nil {
			b.Fatal(err)
		}
		srv.Close()
	}
}

// A client of AWSConfigFor lands in its account and region, and Peek finds
// a queue of that namespace by its URL, whatever the URL's style, apart
// from the queue of the same name in the default namespace.
func TestAnotherAccountAndRegion(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	other := awssqs.NewFromConfig(srv.AWSConfigFor("111111111111", "eu-west-1"))
	mine := srv.SQSClient()
	otherURL := *must(other.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("jobs")})).QueueUrl
	myURL := *must(mine.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("jobs")})).QueueUrl
	if !strings.Contains(otherURL, "/111111111111/jobs") || otherURL == myURL {
		t.Fatalf("queue URLs %s and %s", otherURL, myURL)
	}
	must(other.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: &otherURL, MessageBody: aws.String("theirs")}))
	must(mine.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: &myURL, MessageBody: aws.String("mine")}))
	srvURL := srv.URL()
	for _, u := range []string{otherURL, srvURL + "/queue/eu-west-1/111111111111/jobs", "http://sqs.eu-west-1.localhost:4566/111111111111/jobs"} {
		got := srv.Peek(u)
		if len(got) != 1 || got[0].Body != "theirs" {
			t.Errorf("Peek(%s) = %+v", u, got)
		}
	}
	for _, u := range []string{myURL, "jobs"} {
		if got := srv.Peek(u); len(got) != 1 || got[0].Body != "mine" {
			t.Errorf("Peek(%s) = %+v", u, got)
		}
	}
	attrs := must(other.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &otherURL, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}}))
	if arn := attrs.Attributes["QueueArn"]; arn != "arn:aws:sqs:eu-west-1:111111111111:jobs" {
		t.Errorf("QueueArn %s", arn)
	}
}

// A test of a restart: the second server opens the first one's data dir
// and starts its manual clock where the first one's stood, so that
// visibility timeouts run on from there.
func TestRestartOnADataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	onDisk := fanouttest.WithOptions(func(o *fanout.Options) { o.DataDir = dir })
	start := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	first := fanouttest.Start(t, onDisk, fanouttest.WithStartTime(start))
	q := first.SQSClient()
	url := must(q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("jobs"),
		Attributes: map[string]string{"VisibilityTimeout": "30"}})).QueueUrl
	must(q.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("job")}))
	got := must(q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url}))
	if len(got.Messages) != 1 {
		t.Fatal("not received")
	}
	handle := got.Messages[0].ReceiptHandle
	first.Advance(10 * time.Second)
	stopped := first.Now()
	first.Close()

	second := fanouttest.Start(t, onDisk, fanouttest.WithStartTime(stopped))
	msgs := second.Peek("jobs", sqs.MessageInflight)
	if len(msgs) != 1 || msgs[0].Body != "job" || msgs[0].ReceiveCount != 1 || !msgs[0].StateEnds.Equal(start.Add(30*time.Second)) {
		t.Fatalf("in flight after the restart, until 30 s after the receive: %+v", msgs)
	}
	// The handle of before the restart still names the receive: it moves
	// the message's visibility on the restored clock.
	sq := second.SQSClient()
	url = must(sq.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("jobs")})).QueueUrl
	if _, err := sq.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{
		QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: 40}); err != nil {
		t.Fatalf("handle of before the restart: %v", err)
	}
	second.Advance(39 * time.Second)
	if msgs := second.Peek("jobs", sqs.MessageInflight); len(msgs) != 1 {
		t.Fatalf("in flight 39 s after the change: %+v", msgs)
	}
	second.Advance(time.Second)
	if msgs := second.Peek("jobs", sqs.MessageVisible); len(msgs) != 1 {
		t.Fatalf("visible 40 s after the change: %+v", msgs)
	}
}

// On the wall clock, Advance stores the new offset in the data dir, as
// POST /_fanout/clock does: a restart keeps the time it reached.
func TestRealTimeAdvanceSurvivesARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	onDisk := fanouttest.WithOptions(func(o *fanout.Options) { o.DataDir = dir })
	first := fanouttest.Start(t, onDisk, fanouttest.WithRealTime())
	q := first.SQSClient()
	url := must(q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("jobs"),
		Attributes: map[string]string{"VisibilityTimeout": "3600"}})).QueueUrl
	must(q.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("job")}))
	if got := must(q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})); len(got.Messages) != 1 {
		t.Fatal("not received")
	}
	first.Advance(2 * time.Hour) // past the receive's hour of invisibility
	first.Close()

	second := fanouttest.Start(t, onDisk, fanouttest.WithRealTime())
	if ahead := time.Until(second.Now()); ahead < 2*time.Hour-time.Minute {
		t.Fatalf("after the restart the clock is %s ahead of the wall clock, want the 2h it was moved", ahead)
	}
	sq := second.SQSClient()
	url = must(sq.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("jobs")})).QueueUrl
	got := must(sq.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url}))
	if len(got.Messages) != 1 || aws.ToString(got.Messages[0].Body) != "job" {
		t.Fatalf("the message whose visibility timeout the moved clock ended is not visible after the restart: %+v", got.Messages)
	}
}

// A FIFO message whose retention ends while it is in flight stops locking
// its group once it is dropped: the group's next message is received (the
// clock moved by the test).
func TestFIFORetentionEndInFlightUnlocksTheGroup(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	q := srv.SQSClient()
	url := must(q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("retain.fifo"), Attributes: map[string]string{
		"FifoQueue": "true", "MessageRetentionPeriod": "60", "VisibilityTimeout": "120"}})).QueueUrl
	send := func(body string) {
		must(q.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String(body),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(body)}))
	}
	send("first")
	if got := must(q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})).Messages; len(got) != 1 {
		t.Fatalf("first receive: %d messages", len(got))
	}
	srv.Advance(100 * time.Second) // retention over, still in flight
	send("second")
	srv.Advance(20 * time.Second) // its visibility timeout ends: dropped
	got := must(q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})).Messages
	if len(got) != 1 || *got[0].Body != "second" {
		t.Fatalf("after the first's retention: %d messages, want [second]", len(got))
	}
}
