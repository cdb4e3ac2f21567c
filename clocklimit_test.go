package fanout_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/sdktest"
)

// POST /_fanout/clock refuses to move the clock past clock.Latest (engine
// times are Unix nanoseconds, which wrap in 2262), and up to there every
// timed behaviour still works: visibility timeouts end, timestamps are sane.
func TestClockAdvanceStopsBeforeTimeWraps(t *testing.T) {
	t.Parallel()
	m := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := fanout.Start(context.Background(), fanout.Options{Clock: m})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var bad map[string]string
	for _, adv := range []string{"2562047h", "1530000h"} { // the largest Go duration; mid-2200
		if code := getJSON(t, "POST", s.URL()+"/_fanout/clock", `{"advance":"`+adv+`"}`, &bad); code != 400 || !strings.Contains(bad["error"], "past 2200-01-01T00:00:00Z") {
			t.Fatalf("advance %s: %d %v", adv, code, bad)
		}
	}
	var view struct{ Now string }
	if code := getJSON(t, "POST", s.URL()+"/_fanout/clock", `{"advance":"1516000h"}`, &view); code != 200 || !strings.HasPrefix(view.Now, "2198-") {
		t.Fatalf("%d %+v", code, view)
	}
	c := sqs.NewFromConfig(sdktest.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("late")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	recv := func() []types.Message {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, VisibilityTimeout: 30,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	msgs := recv()
	if len(msgs) != 1 {
		t.Fatalf("%v", msgs)
	}
	sent, _ := strconv.ParseInt(msgs[0].Attributes["SentTimestamp"], 10, 64)
	if sent <= m.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("SentTimestamp %d at %v", sent, m.Now())
	}
	m.Advance(time.Minute)
	if msgs := recv(); len(msgs) != 1 || msgs[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("the visibility timeout did not end: %v", msgs)
	}
}
