package fanout

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/sdktest"
)

// hook is an HTTP endpoint that hands over its confirmation tokens, fails
// the first fails notifications with a 500, and can hold the first one
// until released.
type hook struct {
	srv      *httptest.Server
	tokens   chan string
	fails    int
	unsure   int           // confirmation messages to fail before answering 200
	hold     chan struct{} // nil: hold nothing
	arrived  chan struct{} // a held notification came in
	mu       sync.Mutex
	messages []string // MessageId of each notification, in order
}

func newHook(t testing.TB, fails int, hold bool) *hook {
	h := &hook{tokens: make(chan string, 10), fails: fails, arrived: make(chan struct{}, 1)}
	if hold {
		h.hold = make(chan struct{})
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct{ Token, MessageId string }
		_ = json.Unmarshal(body, &m)
		if r.Header.Get("x-amz-sns-message-type") == delivery.TypeSubscriptionConfirmation {
			h.mu.Lock()
			h.unsure--
			fail := h.unsure >= 0
			h.mu.Unlock()
			if fail {
				w.WriteHeader(http.StatusInternalServerError)
			}
			h.tokens <- m.Token
			return
		}
		h.mu.Lock()
		h.messages = append(h.messages, m.MessageId)
		n := len(h.messages)
		h.mu.Unlock()
		if n == 1 && h.hold != nil {
			h.arrived <- struct{}{}
			<-h.hold
		}
		if n <= h.fails {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(func() {
		if h.hold != nil {
			select {
			case <-h.hold:
			default:
				close(h.hold)
			}
		}
		h.srv.Close()
	})
	return h
}

func (h *hook) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.messages...)
}

// startOn starts fanout on a data dir, on its default (adjustable) clock.
func startOn(t *testing.T, dir string) *Server {
	t.Helper()
	s, err := Start(context.Background(), Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// subscribedTopic makes a topic with an HTTP subscription to h, confirmed.
func subscribedTopic(t *testing.T, s *Server, h *hook) (*sns.Client, string) {
	t.Helper()
	ctx := context.Background()
	c := snsAs(s, "AKIDTEST", "us-east-1")
	topic, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(h.srv.URL + "/hook")}); err != nil {
		t.Fatal(err)
	}
	token := <-h.tokens
	if _, err := c.ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: &token}); err != nil {
		t.Fatal(err)
	}
	return c, aws.ToString(topic.TopicArn)
}

func settled(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.deliveries.Settle(ctx); err != nil {
		t.Fatal(err)
	}
}

// advance moves the clock through POST /_fanout/clock, as a user does.
func advance(t *testing.T, s *Server, d string) (offset string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/_fanout/clock", strings.NewReader(`{"advance":"`+d+`"}`))
	req.Header.Set("Content-Type", "application/json")
	return clockCall(t, req)
}

func clockOffset(t *testing.T, s *Server) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/_fanout/clock", nil)
	return clockCall(t, req)
}

func clockCall(t *testing.T, req *http.Request) string {
	t.Helper()
	resp, err := sdktest.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ Offset string }
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s /_fanout/clock: %d %v", req.Method, resp.StatusCode, err)
	}
	return v.Offset
}

func onlyRecord(t *testing.T, s *Server) delivery.Record {
	t.Helper()
	recs := s.deliveries.Records(delivery.Query{Type: delivery.TypeNotification})
	if len(recs) != 1 {
		t.Fatalf("%d notification records, want 1: %+v", len(recs), recs)
	}
	return recs[0]
}

// A retry pending at a restart happens at the time it was due on the clock,
// with the attempt count it had reached, so the policy's remaining attempts
// (HTTP's default: 4 in all, 20 s apart) continue rather than start again;
// the clock's offset survives each restart.
func TestDataDirRetryResumesAtItsDueTimeWithItsAttemptCount(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHook(t, 100, false)

	s := startOn(t, dir)
	c, topic := subscribedTopic(t, s, h)
	out, err := c.Publish(ctx, &sns.PublishInput{TopicArn: &topic, Message: aws.String("hello")})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.MessageId)
	settled(t, s)
	if r := onlyRecord(t, s); len(h.got()) != 1 || r.AttemptCount != 1 || r.Status != delivery.StatusRetrying {
		t.Fatalf("before the restart: %d notifications, record %+v", len(h.got()), r)
	}
	due := *onlyRecord(t, s).NextAttempt
	if err := s.store.Compact(); err != nil { // so the restart reads the job from a snapshot
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOn(t, dir)
	r := onlyRecord(t, s)
	if r.Status != delivery.StatusRetrying || r.AttemptCount != 1 || r.NextAttempt == nil || !r.NextAttempt.Equal(due) || r.MessageID != id {
		t.Fatalf("restored record %+v, want retrying with 1 attempt, next at %v", r, due)
	}
	settled(t, s)
	if n := len(h.got()); n != 1 {
		t.Fatalf("%d notifications before the retry was due", n)
	}
	if off := advance(t, s, "20s"); off != "20s" {
		t.Fatalf("offset %s after moving the clock 20s", off)
	}
	r = onlyRecord(t, s)
	if n := len(h.got()); n != 2 || r.AttemptCount != 2 || len(r.Attempts) != 1 || r.Attempts[0].Number != 2 || r.Attempts[0].Time.Before(due) {
		t.Fatalf("after 20s: %d notifications, record %+v", n, r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOn(t, dir)
	defer s.Close()
	if off := clockOffset(t, s); off != "20s" {
		t.Fatalf("clock offset %s after a restart, want 20s", off)
	}
	advance(t, s, "20s")
	advance(t, s, "20s")
	advance(t, s, "20s") // past the policy's last attempt
	r = onlyRecord(t, s)
	got := h.got()
	if len(got) != 4 || r.Status != delivery.StatusDropped || r.AttemptCount != 4 || !strings.Contains(r.Reason, "after 4 attempts") {
		t.Fatalf("%d notifications in all (want the policy's 4), record %+v", len(got), r)
	}
	for _, m := range got {
		if m != id {
			t.Fatalf("notifications %v, want each of message %s", got, id)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startOn(t, dir) // the dropped delivery's record is gone
	defer s.Close()
	if recs := s.deliveries.Records(delivery.Query{Type: delivery.TypeNotification}); len(recs) != 0 || s.deliveries.Scheduled() != 0 {
		t.Fatalf("after the job ended, a restart restored %+v", recs)
	}
}

// copyDir copies what a data dir holds on disk at this moment: what a
// kill -9 would leave behind.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if err := os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// Once Publish answered, its HTTP delivery is on disk: a crash before the
// first attempt ended still delivers it after the restart. A delivery that
// succeeded is not made again after a clean restart.
func TestDataDirDeliveryOfACrashBeforeItsFirstAttempt(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHook(t, 0, true)

	s := startOn(t, dir)
	defer s.Close()
	c, topic := subscribedTopic(t, s, h)
	out, err := c.Publish(ctx, &sns.PublishInput{TopicArn: &topic, Message: aws.String("hello")})
	if err != nil {
		t.Fatal(err)
	}
	<-h.arrived // the first attempt is in progress: the crash comes now
	crashed := copyDir(t, dir)

	s2 := startOn(t, crashed)
	settled(t, s2)
	r := onlyRecord(t, s2)
	if got := h.got(); len(got) != 2 || got[1] != aws.ToString(out.MessageId) || r.Status != delivery.StatusDelivered || r.AttemptCount != 1 {
		t.Fatalf("after the crash: notifications %v, record %+v", got, r)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}

	s3 := startOn(t, crashed)
	defer s3.Close()
	advance(t, s3, "1h")
	if got := h.got(); len(got) != 2 || s3.deliveries.Scheduled() != 0 || len(s3.deliveries.Records(delivery.Query{})) != 0 {
		t.Fatalf("a delivered notification came back after a clean restart: %v", got)
	}
}

// The clock's offset is stored before POST /_fanout/clock answers: a
// restart reads the same time (wall clock plus offset).
func TestDataDirKeepsTheClockOffset(t *testing.T) {
	dir := t.TempDir()
	s := startOn(t, dir)
	advance(t, s, "36h")
	advance(t, s, "90m")
	crashed := copyDir(t, dir) // no clean close needed
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startOn(t, crashed)
	defer s.Close()
	if off := clockOffset(t, s); off != "37h30m0s" {
		t.Fatalf("offset %s after a restart, want 37h30m0s", off)
	}
	if ahead := time.Until(s.opts.Clock.Now()); ahead < 37*time.Hour {
		t.Fatalf("the clock reads %v ahead of the wall", ahead)
	}
}

// A SubscriptionConfirmation whose first attempt failed is retried after a
// crash, with the token the subscription still waits for.
func TestDataDirRetriesAPendingConfirmationAfterACrash(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHook(t, 0, false)
	h.unsure = 1

	s := startOn(t, dir)
	c := snsAs(s, "AKIDTEST", "us-east-1")
	topic, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(h.srv.URL + "/hook")}); err != nil {
		t.Fatal(err)
	}
	first := <-h.tokens // answered 500
	settled(t, s)
	crashed := copyDir(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOn(t, crashed)
	defer s.Close()
	advance(t, s, "20s") // HTTP's default policy: the next attempt 20 s later
	var again string
	select {
	case again = <-h.tokens:
	default:
		t.Fatal("no SubscriptionConfirmation after the restart")
	}
	if again != first {
		t.Fatalf("token %q after the restart, want %q", again, first)
	}
	c = snsAs(s, "AKIDTEST", "us-east-1")
	out, err := c.ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: &again})
	if err != nil {
		t.Fatal(err)
	}
	subs, err := c.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: topic.TopicArn})
	if err != nil || len(subs.Subscriptions) != 1 || aws.ToString(subs.Subscriptions[0].SubscriptionArn) != aws.ToString(out.SubscriptionArn) {
		t.Fatalf("subscriptions %+v, %v", subs, err)
	}
}

// POST /_fanout/reset cancels pending retries, and a restart does not bring
// them back.
func TestDataDirResetForgetsPendingDeliveries(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHook(t, 100, false)
	s := startOn(t, dir)
	c, topic := subscribedTopic(t, s, h)
	if _, err := c.Publish(ctx, &sns.PublishInput{TopicArn: &topic, Message: aws.String("hello")}); err != nil {
		t.Fatal(err)
	}
	settled(t, s)
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startOn(t, dir)
	defer s.Close()
	advance(t, s, "1h")
	if n := len(h.got()); n != 1 || len(s.deliveries.Records(delivery.Query{})) != 0 || s.deliveries.Scheduled() != 0 {
		t.Fatalf("after a reset and a restart: %d notifications, records %+v", n, s.deliveries.Records(delivery.Query{}))
	}
}

// A delivery that fails its last attempt after a restart goes to its
// dead-letter queue, and a crash after that keeps the DLQ's message and
// brings no delivery back.
func TestDataDirDeadLettersAfterARestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHook(t, 100, false)
	s := startOn(t, dir)
	c, topic := subscribedTopic(t, s, h)
	q := sqs.NewFromConfig(sdktest.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	dlq, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dlq")})
	if err != nil {
		t.Fatal(err)
	}
	subs, err := c.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: &topic})
	if err != nil {
		t.Fatal(err)
	}
	sub := subs.Subscriptions[0].SubscriptionArn
	for name, v := range map[string]string{
		"RedrivePolicy":  `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`,
		"DeliveryPolicy": `{"healthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":5,"numRetries":1}}`,
	} {
		if _, err := c.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: sub, AttributeName: aws.String(name), AttributeValue: aws.String(v)}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.Publish(ctx, &sns.PublishInput{TopicArn: &topic, Message: aws.String("hello")})
	if err != nil {
		t.Fatal(err)
	}
	settled(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOn(t, dir)
	advance(t, s, "5s") // the last attempt fails: to the DLQ
	if r := onlyRecord(t, s); r.Status != delivery.StatusDeadLettered || r.AttemptCount != 2 || len(h.got()) != 2 {
		t.Fatalf("record %+v after %d notifications", r, len(h.got()))
	}
	// The end of a delivery is not waited for; the crash comes once it is
	// on disk (before that, the delivery would be made once more).
	if err := s.store.Sync(); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOn(t, crashed)
	defer s.Close()
	if s.deliveries.Scheduled() != 0 || len(s.deliveries.Records(delivery.Query{})) != 0 {
		t.Fatalf("a dead-lettered delivery came back: %+v", s.deliveries.Records(delivery.Query{}))
	}
	q = sqs.NewFromConfig(sdktest.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: dlq.QueueUrl, MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || !strings.Contains(aws.ToString(got.Messages[0].Body), aws.ToString(out.MessageId)) {
		t.Fatalf("the DLQ holds %+v, want the notification", got.Messages)
	}
}
