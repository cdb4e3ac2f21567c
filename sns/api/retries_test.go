package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
)

// down answers 500 to the first n notifications, then 200.
func down(n int) func(int) int {
	return func(i int) int {
		if i <= n {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
}

func always(status int) func(int) int { return func(int) int { return status } }

func TestHTTPEndpointDownThreeTimesGetsTheFourthAttempt(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := newHook(t, false, down(3))
	topic := e.topic(t, "t", nil)
	sub := e.subscribeHook(t, topic, h, nil)
	t0 := e.clk.Now()
	out := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("hello"), Subject: aws.String("s")})
	e.settle(t)

	// AWS's default HTTP/S policy: 3 retries, 20 s apart.
	for i := 1; i <= 3; i++ {
		if n := len(h.requests(delivery.TypeNotification)); n != i {
			t.Fatalf("after %v: %d attempts, want %d", e.clk.Now().Sub(t0), n, i)
		}
		e.advance(t, 19*time.Second)
		if n := len(h.requests(delivery.TypeNotification)); n != i {
			t.Fatalf("retry %d came early", i)
		}
		e.advance(t, time.Second)
	}
	reqs := h.requests(delivery.TypeNotification)
	if len(reqs) != 4 {
		t.Fatalf("%d attempts", len(reqs))
	}
	last := reqs[3]
	for k, v := range map[string]string{
		"Content-Type": "text/plain; charset=UTF-8", "User-Agent": "Amazon Simple Notification Service Agent",
		"X-Amz-Sns-Message-Type": "Notification", "X-Amz-Sns-Message-Id": aws.ToString(out.MessageId),
		"X-Amz-Sns-Topic-Arn": topic, "X-Amz-Sns-Subscription-Arn": sub,
	} {
		if got := last.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	env := last.json(t)
	if env["Message"] != "hello" || env["MessageId"] != aws.ToString(out.MessageId) || last.Path != "/sns" {
		t.Fatalf("delivered %s to %s", last.Body, last.Path)
	}
	verifyKeys(t, env, env["SigningCertURL"].(string), []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"})

	recs := e.records(t, "type=Notification&subscription="+sub)
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	if r.Status != delivery.StatusDelivered || r.AttemptCount != 4 || r.MaxAttempts != 4 || len(r.Attempts) != 4 {
		t.Fatalf("record %+v", r)
	}
	for i, a := range r.Attempts {
		if want := t0.Add(time.Duration(i) * 20 * time.Second); !a.Time.Equal(want) {
			t.Errorf("attempt %d at %v, want %v", i+1, a.Time, want)
		}
		wantOutcome, wantStatus := delivery.OutcomeFailed, 500
		if i == 3 {
			wantOutcome, wantStatus = delivery.OutcomeDelivered, 200
		}
		if a.Outcome != wantOutcome || a.HTTPStatus != wantStatus {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
}

func TestAlwaysFailingEndpointDeadLettersAfterThePolicy(t *testing.T) {
	t.Parallel()
	// The server's default clock: real time that POST /_fanout/clock moves.
	e := start(t, fanout.Options{Clock: clock.NewAdjustable()})
	h := newHook(t, false, always(http.StatusServiceUnavailable))
	topic := e.topic(t, "t", nil)
	dlq := e.queue(t, "dlq", nil)
	// 1 + 5 retries: 2 immediate, 1 after 10 s, 2 backing off (20 s, 30 s): 60 s in all.
	policy := `{"healthyRetryPolicy":{"minDelayTarget":10,"maxDelayTarget":30,"numRetries":5,"numNoDelayRetries":2,"numMinDelayRetries":1,"backoffFunction":"linear"}}`
	sub := e.subscribeHook(t, topic, h, map[string]string{
		"DeliveryPolicy": policy, "RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `"}`,
	})
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("lost"),
		MessageAttributes: map[string]types.MessageAttributeValue{"k": strAttr("v")}})

	e.postClock(t, "50s")
	if got := e.drain(t, dlq); len(got) != 0 {
		t.Fatalf("dead-lettered before the policy ran out: %v", bodies(t, got, true))
	}
	e.postClock(t, "10s")
	msgs := e.drain(t, dlq)
	if len(msgs) != 1 || bodies(t, msgs, true)[0] != "lost" || len(msgs[0].MessageAttributes) != 0 {
		t.Fatalf("DLQ holds %+v", msgs)
	}
	env := envelopeOf(t, msgs[0])
	if env["MessageAttributes"] == nil || env["UnsubscribeURL"] == nil {
		t.Fatalf("DLQ body is not the envelope the endpoint got: %v", env)
	}
	if n := len(h.requests(delivery.TypeNotification)); n != 6 {
		t.Fatalf("endpoint saw %d attempts, want 6", n)
	}
	recs := e.records(t, "type=Notification&subscription="+sub+"&status=dead-lettered")
	if len(recs) != 1 || recs[0].AttemptCount != 6 || recs[0].DeadLetterQueue != dlq.ARN {
		t.Fatalf("records %+v", recs)
	}
	gaps := []time.Duration{0, 0, 10 * time.Second, 20 * time.Second, 30 * time.Second}
	for i, g := range gaps {
		a, b := recs[0].Attempts[i], recs[0].Attempts[i+1]
		if d := b.Time.Sub(a.Time); d < g || d > g+time.Second {
			t.Errorf("attempt %d came %v after the one before, want %v", i+2, d, g)
		}
	}
	if s := e.subStats(t, sub); s.DeadLettered != 1 || s.Failed != 6 {
		t.Fatalf("stats %+v", s)
	}
}

func TestClientErrorsSkipRetries(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := newHook(t, false, always(http.StatusNotFound))
	topic := e.topic(t, "t", nil)
	dlq := e.queue(t, "dlq", nil)
	sub := e.subscribeHook(t, topic, h, map[string]string{
		"RawMessageDelivery": "true", "RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `"}`,
	})
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("raw text"),
		MessageAttributes: map[string]types.MessageAttributeValue{"k": strAttr("v")}})
	e.settle(t)
	msgs := e.drain(t, dlq)
	if len(msgs) != 1 || aws.ToString(msgs[0].Body) != "raw text" || aws.ToString(msgs[0].MessageAttributes["k"].StringValue) != "v" {
		t.Fatalf("DLQ holds %+v", msgs)
	}
	if got := h.requests(delivery.TypeNotification); len(got) != 1 || got[0].Header.Get("X-Amz-Sns-Rawdelivery") != "true" || got[0].Body != "raw text" {
		t.Fatalf("endpoint got %+v", got)
	}
	r := e.records(t, "type=Notification&subscription="+sub)[0]
	if r.Status != delivery.StatusDeadLettered || r.Attempts[0].Outcome != delivery.OutcomeRejected || r.Attempts[0].HTTPStatus != 404 {
		t.Fatalf("record %+v", r)
	}
}

func TestDeletedQueueGoesToTheSubscriptionDLQ(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{NoRecreateWait: true})
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	dlq := e.queue(t, "dlq", nil)
	sub := e.subscribe(t, topic, q, map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `"}`})
	if _, err := e.sqs.DeleteQueue(ctx(t), &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("orphan")})
	if got := bodies(t, e.drain(t, dlq), true); len(got) != 1 || got[0] != "orphan" {
		t.Fatalf("DLQ holds %v", got)
	}
	r := e.records(t, "type=Notification&subscription="+sub)[0]
	if r.Status != delivery.StatusDeadLettered || r.AttemptCount != 1 || !strings.Contains(r.Reason, "does not exist") {
		t.Fatalf("record %+v", r)
	}
}

// A subscription remembers its queue between deliveries; a queue deleted
// and made again under its name is the new one, as on AWS.
func TestQueueDeletedAndMadeAgainGetsTheNextMessage(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{NoRecreateWait: true})
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("first")})
	if _, err := e.sqs.DeleteQueue(ctx(t), &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("lost")})
	if _, err := e.sqs.CreateQueue(ctx(t), &sqs.CreateQueueInput{QueueName: aws.String(q.ARN[strings.LastIndexByte(q.ARN, ':')+1:])}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("second")})
	if got := bodies(t, e.drain(t, q), false); len(got) != 1 || got[0] != "second" {
		t.Fatalf("the new queue holds %v, want [second]", got)
	}
	recs := e.records(t, "type=Notification&subscription="+sub)
	if len(recs) != 3 || recs[0].Status != delivery.StatusDelivered || recs[1].Status != delivery.StatusDropped || recs[2].Status != delivery.StatusDelivered {
		t.Fatalf("records %+v", recs)
	}
}

func TestThrottlePolicyCapsTheRate(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := sink(t, false)
	topic := e.topic(t, "t", nil)
	sub := e.subscribeHook(t, topic, h, map[string]string{"DeliveryPolicy": `{"throttlePolicy":{"maxReceivesPerSecond":2}}`})
	t0 := e.clk.Now()
	for i := 0; i < 5; i++ {
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	}
	e.settle(t)
	if n := len(h.requests(delivery.TypeNotification)); n != 1 {
		t.Fatalf("%d delivered at once, want 1", n)
	}
	e.advance(t, time.Second)
	if n := len(h.requests(delivery.TypeNotification)); n != 3 {
		t.Fatalf("%d delivered after 1 s, want 3", n)
	}
	e.advance(t, time.Second)
	var times []time.Duration
	for _, r := range e.records(t, "type=Notification&subscription="+sub+"&status=delivered") {
		times = append(times, r.Attempts[0].Time.Sub(t0))
	}
	if len(times) != 5 || len(h.requests(delivery.TypeNotification)) != 5 {
		t.Fatalf("delivered at %v", times)
	}
	// The slots are taken in the order the deliveries reach the throttle,
	// which need not be the publishes' (their jobs run concurrently, and a
	// standard topic promises no order): the rate is what is capped.
	slices.Sort(times)
	for i, at := range times {
		if want := time.Duration(i) * 500 * time.Millisecond; at != want {
			t.Errorf("delivered at %v, want one every 500ms from +0s", times)
			break
		}
	}
}

func TestRetriesFollowTheManualClockThroughTheAdminAPI(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := newHook(t, false, always(http.StatusBadGateway))
	topic := e.topic(t, "t", nil)
	sub := e.subscribeHook(t, topic, h, nil)
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	e.settle(t)
	r := e.records(t, "type=Notification&subscription="+sub)[0]
	if r.Status != delivery.StatusRetrying || r.NextAttempt == nil || !r.NextAttempt.Equal(e.clk.Now().Add(20*time.Second)) {
		t.Fatalf("record %+v", r)
	}
	e.postClock(t, "1h")
	r = e.records(t, "type=Notification&subscription="+sub)[0]
	if r.Status != delivery.StatusDropped || r.AttemptCount != 4 {
		t.Fatalf("record %+v", r)
	}
	if s := e.subStats(t, sub); s.Dropped != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := newHook(t, false, always(http.StatusFound))
	topic := e.topic(t, "t", nil)
	sub := e.subscribeHook(t, topic, h, map[string]string{"DeliveryPolicy": `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":0}}`})
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	e.settle(t)
	r := e.records(t, "type=Notification&subscription="+sub)[0]
	if r.Status != delivery.StatusDropped || r.Attempts[0].HTTPStatus != http.StatusFound {
		t.Fatalf("record %+v", r)
	}
}

func TestRetriesStopWhenTheSubscriptionIsDeleted(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := newHook(t, false, always(http.StatusServiceUnavailable))
	topic := e.topic(t, "t", nil)
	sub := e.subscribeHook(t, topic, h, nil)
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	e.settle(t)
	if n := len(h.requests(delivery.TypeNotification)); n != 1 {
		t.Fatalf("%d attempts before the unsubscribe", n)
	}
	if _, err := e.sns.Unsubscribe(ctx(t), &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	e.advance(t, time.Hour) // past every retry of AWS's default HTTP policy
	if n := len(h.requests(delivery.TypeNotification)); n != 1 {
		t.Fatalf("a deleted subscription got %d attempts", n)
	}
	recs := e.records(t, "type=Notification&subscription="+sub)
	if len(recs) != 1 || recs[0].Status != delivery.StatusDropped || recs[0].Reason != "subscription deleted" {
		t.Fatalf("records %+v", recs)
	}
	if len(h.requests(delivery.TypeUnsubscribeConfirmation)) != 1 {
		t.Fatal("the endpoint was not told it was unsubscribed")
	}
}
