package api_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	fsqs "github.com/fanout/fanout/sqs"
)

// A long poll on a queue at the in-flight limit (filled through the engine,
// 120,000 receives being too slow over HTTP) sleeps though messages are
// visible, and a DeleteMessageBatch that frees room wakes it with the clock
// standing still.
func TestSDKLongPollAtTheInflightLimitWakesOnDelete(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, srv := start(t, fanout.Options{Clock: clk})
	url := createQueue(t, c, "full", nil)
	q, err := srv.SQS().Queue("full")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 120000
	for range limit + 5 {
		if _, err := q.Send(fsqs.SendInput{Body: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	var first string
	for n, ten, zero := 0, 10, 0; n < limit; {
		out, err := q.Receive(context.Background(), fsqs.ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero})
		if err != nil || len(out) == 0 {
			t.Fatalf("filling: %d received, %v", len(out), err)
		}
		if first == "" {
			first = out[0].ReceiptHandle
		}
		n += len(out)
	}
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "OverLimit" {
		t.Fatalf("short poll at the limit: %v", err)
	}
	pending := clk.Pending()
	done := make(chan *sqs.ReceiveMessageOutput, 1)
	go func() {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	for clk.Pending() == pending { // the poll armed its deadline: it waits
		time.Sleep(time.Millisecond)
	}
	del, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url,
		Entries: []types.DeleteMessageBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: &first}}})
	if err != nil || len(del.Successful) != 1 {
		t.Fatalf("delete %+v %v", del, err)
	}
	select {
	case out := <-done:
		if out == nil || len(out.Messages) != 1 {
			t.Fatalf("woken poll got %+v", out)
		}
	case <-time.After(10 * time.Second): // a hang guard, not a timing
		t.Fatal("the long poll did not wake when the delete freed room")
	}
}
