package api_test

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

// TestSendNearMemoryLimit: with Go's memory limit below the live heap, the
// SDK's SendMessage and SendMessageBatch get RequestThrottled; receives
// still work; with the limit back, sends succeed. Not parallel: the limit is
// the process's (parallel tests start only after this one ends).
func TestSendNearMemoryLimit(t *testing.T) {
	c, _ := start(t, fanout.Options{})
	q := createQueue(t, c, "memlimit", nil)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("stored")}); err != nil {
		t.Fatal(err)
	}
	once := func(o *sqs.Options) { o.RetryMaxAttempts = 1 } // the SDK retries RequestThrottled
	old := debug.SetMemoryLimit(1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	// The guard rereads the limit at most every 10 ms: send until it has.
	var err error
	for range 100000 {
		if _, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("x")}, once); err != nil {
			break
		}
	}
	apiErr(t, err, "RequestThrottled", "fanout is near its memory limit (--memory-limit): no more messages are stored until consumers delete some or queues are purged.")
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q,
		Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("x")}}}, once)
	apiErr(t, err, "RequestThrottled", "")
	if _, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q, MaxNumberOfMessages: 1}); err != nil {
		t.Fatalf("receive near the limit: %v", err)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	for range 100000 {
		if _, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("x")}, once); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("send after the limit was lifted: %v", err)
	}
}
