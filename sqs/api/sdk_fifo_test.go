package api_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

func TestSDKFifo(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	url := createQueue(t, c, "orders.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
	var seqs []string
	for i := 0; i < 3; i++ {
		out, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m" + strconv.Itoa(i)), MessageGroupId: aws.String("g")})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, *out.SequenceNumber)
	}
	dup, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m0"), MessageGroupId: aws.String("g")})
	if err != nil || *dup.SequenceNumber != seqs[0] {
		t.Fatalf("duplicate %+v %v", dup, err)
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x")})
	apiErr(t, err, "MissingParameter", "The request must contain the parameter MessageGroupId.")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), DelaySeconds: 5})
	apiErr(t, err, "InvalidParameterValue", "Value 5 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.")

	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, ReceiveRequestAttemptId: aws.String("a1"),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"SequenceNumber", "MessageGroupId"}})
	if err != nil || len(out.Messages) != 3 {
		t.Fatalf("receive %v %v", out, err)
	}
	for i, m := range out.Messages {
		if *m.Body != "m"+strconv.Itoa(i) || m.Attributes["SequenceNumber"] != seqs[i] || m.Attributes["MessageGroupId"] != "g" {
			t.Fatalf("message %d: %s %v", i, *m.Body, m.Attributes)
		}
	}
	again, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, ReceiveRequestAttemptId: aws.String("a1")})
	if len(again.Messages) != 3 || *again.Messages[0].ReceiptHandle != *out.Messages[0].ReceiptHandle {
		t.Fatal("retried attempt id did not return the same messages")
	}
	batch, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("b1"), MessageGroupId: aws.String("h")},
		{Id: aws.String("b"), MessageBody: aws.String("bad\u0000"), MessageGroupId: aws.String("h")},
	}})
	if err != nil || len(batch.Successful) != 1 || *batch.Successful[0].SequenceNumber == "" || len(batch.Failed) != 1 || *batch.Failed[0].Code != "InvalidMessageContents" {
		t.Fatalf("batch %+v %v", batch, err)
	}
	// A missing group id fails the whole batch on a FIFO queue.
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("b1"), MessageGroupId: aws.String("h")},
		{Id: aws.String("b"), MessageBody: aws.String("b2")},
	}})
	apiErr(t, err, "InvalidParameterValue", "The request must contain the parameter MessageGroupId.")
}

func TestSDKMoveTasks(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, _ := start(t, fanout.Options{Clock: clk})
	dlq := createQueue(t, c, "mv-dlq", nil)
	src := createQueue(t, c, "mv-src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:mv-dlq","maxReceiveCount":1}`})
	for i := 0; i < 3; i++ {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &dlq, MessageBody: aws.String("d")}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:mv-src")})
	apiErr(t, err, "InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue.")
	_, err = c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:none")})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("missing source: %v", err)
	}
	started, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{
		SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:mv-dlq"), DestinationArn: aws.String("arn:aws:sqs:us-east-1:000000000000:mv-src"),
		MaxNumberOfMessagesPerSecond: aws.Int32(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:mv-dlq")})
	if err != nil || len(list.Results) != 1 || *list.Results[0].Status != "RUNNING" || *list.Results[0].TaskHandle != *started.TaskHandle || list.Results[0].ApproximateNumberOfMessagesToMove == nil || *list.Results[0].ApproximateNumberOfMessagesToMove != 3 {
		t.Fatalf("list %+v %v", list, err)
	}
	clk.Advance(2 * time.Second)
	cancelled, err := c.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: started.TaskHandle})
	if err != nil || cancelled.ApproximateNumberOfMessagesMoved != 2 {
		t.Fatalf("cancel %+v %v", cancelled, err)
	}
	got, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &src, MaxNumberOfMessages: 10})
	if len(got.Messages) != 2 {
		t.Fatalf("moved %d", len(got.Messages))
	}
}
