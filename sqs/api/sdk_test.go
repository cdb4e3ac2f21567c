package api_test

import (
	"context"
	"errors"
	"github.com/fanout/fanout/internal/sdktest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

// start runs fanout in-process and returns an aws-sdk-go-v2 client for it.
func start(t *testing.T, opts fanout.Options) (*sqs.Client, *fanout.Server) {
	t.Helper()
	s, err := fanout.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := sqs.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		HTTPClient:  sdktest.HTTPClient(),
		// The SDK's default retryer stays on: with retries off, a client-side race
		// in smithy-go (aws/aws-sdk-go-v2#2737) surfaces as a "use of closed network
		// connection" on fast loopback servers. It never retries the 4xx errors tested.
	}, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	return c, s
}

func createQueue(t *testing.T, c *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return *out.QueueUrl
}

// apiErr asserts err is an AWS error with this code (as the SDK reports it,
// i.e. the Query code from x-amzn-query-error) and message.
func apiErr(t *testing.T, err error, code, message string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want %s, got %v", code, err)
	}
	if ae.ErrorCode() != code {
		t.Fatalf("code %q, want %q (%v)", ae.ErrorCode(), code, err)
	}
	if message != "" && ae.ErrorMessage() != message {
		t.Fatalf("message %q\nwant    %q", ae.ErrorMessage(), message)
	}
	if ae.ErrorFault() != smithy.FaultClient {
		t.Fatalf("fault %v", ae.ErrorFault())
	}
}

var ctx = context.Background()

func TestSDKQueueLifecycle(t *testing.T) {
	t.Parallel()
	c, s := start(t, fanout.Options{})
	url := createQueue(t, c, "life", map[string]string{"VisibilityTimeout": "45"})
	if url != s.URL()+"/000000000000/life" {
		t.Fatalf("url %s", url)
	}
	again := createQueue(t, c, "life", map[string]string{"VisibilityTimeout": "45"})
	if again != url {
		t.Fatal("idempotent create returned another URL")
	}
	_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("life"), Attributes: map[string]string{"VisibilityTimeout": "46"}})
	apiErr(t, err, "QueueAlreadyExists", "A queue already exists with the same name and a different value for attribute VisibilityTimeout")
	var exists *types.QueueNameExists
	if !errors.As(err, &exists) {
		t.Fatalf("not a types.QueueNameExists: %T", err)
	}

	got, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("life")})
	if err != nil || *got.QueueUrl != url {
		t.Fatalf("GetQueueUrl %v %v", got, err)
	}
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("life"), QueueOwnerAWSAccountId: aws.String("111111111111")})
	apiErr(t, err, "AWS.SimpleQueueService.NonExistentQueue", "")

	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"QueueArn": "arn:aws:sqs:us-east-1:000000000000:life", "ApproximateNumberOfMessages": "0",
		"ApproximateNumberOfMessagesNotVisible": "0", "ApproximateNumberOfMessagesDelayed": "0",
		"VisibilityTimeout": "45", "MaximumMessageSize": "1048576", "MessageRetentionPeriod": "345600",
		"DelaySeconds": "0", "ReceiveMessageWaitTimeSeconds": "0", "SqsManagedSseEnabled": "true",
	}
	for k, v := range want {
		if attrs.Attributes[k] != v {
			t.Errorf("%s = %q, want %q", k, attrs.Attributes[k], v)
		}
	}
	for _, k := range []string{"CreatedTimestamp", "LastModifiedTimestamp"} {
		if n, err := strconv.ParseInt(attrs.Attributes[k], 10, 64); err != nil || n < time.Now().Add(-time.Minute).Unix() {
			t.Errorf("%s = %q", k, attrs.Attributes[k])
		}
	}
	if len(attrs.Attributes) != 12 {
		t.Errorf("All returned %d attributes: %v", len(attrs.Attributes), attrs.Attributes)
	}
	_, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"Bogus"}})
	apiErr(t, err, "InvalidAttributeName", "Unknown Attribute Bogus.")

	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"DelaySeconds": "5", "Policy": `{"Version":"2012-10-17","Statement":[]}`}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"QueueArn": "x"}})
	apiErr(t, err, "InvalidAttributeName", "Unknown Attribute QueueArn.")
	_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"DelaySeconds": "901"}})
	apiErr(t, err, "InvalidAttributeValue", "Invalid value for the parameter DelaySeconds.")
	one, _ := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"DelaySeconds", "Policy"}})
	if one.Attributes["DelaySeconds"] != "5" || one.Attributes["Policy"] != `{"Version":"2012-10-17","Statement":[]}` || len(one.Attributes) != 2 {
		t.Fatalf("after set: %v", one.Attributes)
	}

	if _, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	apiErr(t, err, "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")
	var dne *types.QueueDoesNotExist
	if !errors.As(err, &dne) {
		t.Fatalf("not a types.QueueDoesNotExist: %T", err)
	}
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("life")})
	apiErr(t, err, "AWS.SimpleQueueService.QueueDeletedRecently", "You must wait 60 seconds after deleting a queue before you can create another with the same name.")
}

func TestSDKQueueURLShapes(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	createQueue(t, c, "shapes", nil)
	for _, u := range []string{
		"https://sqs.us-east-1.amazonaws.com/000000000000/shapes",
		"http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/shapes",
		"https://queue.amazonaws.com/000000000000/shapes",
		"http://localhost:4566/queue/us-east-1/000000000000/shapes",
	} {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(u), MessageBody: aws.String("x")}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String("http://localhost:4566/111111111111/shapes"), MessageBody: aws.String("x")})
	apiErr(t, err, "AWS.SimpleQueueService.NonExistentQueue", "")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String("shapes"), MessageBody: aws.String("x")})
	apiErr(t, err, "InvalidAddress", "")
}

func TestSDKListQueuesPaging(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	for i := 0; i < 5; i++ {
		createQueue(t, c, "page-"+strconv.Itoa(i), nil)
	}
	createQueue(t, c, "other", nil)
	all, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("page-")})
	if err != nil || len(all.QueueUrls) != 5 || all.NextToken != nil {
		t.Fatalf("prefix list: %v %v", all, err)
	}
	var seen []string
	p := sqs.NewListQueuesPaginator(c, &sqs.ListQueuesInput{MaxResults: aws.Int32(2)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.QueueUrls) > 2 {
			t.Fatalf("page of %d", len(out.QueueUrls))
		}
		seen = append(seen, out.QueueUrls...)
	}
	if len(seen) != 6 {
		t.Fatalf("paged %d queues: %v", len(seen), seen)
	}
	_, err = c.ListQueues(ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1001)})
	apiErr(t, err, "InvalidParameterValue", "Value 1001 for parameter MaxResults is invalid. Reason: MaxResults must be an integer between 1 and 1000.")
}

func TestSDKSendReceiveDelete(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	url := createQueue(t, c, "msgs", nil)
	// The SDK checks every MD5 it is given: a wrong one fails the call.
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    &url,
		MessageBody: aws.String("héllo <world> & \"friends\"\r\n"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"str":        {DataType: aws.String("String"), StringValue: aws.String("v")},
			"num":        {DataType: aws.String("Number"), StringValue: aws.String("42.5")},
			"bin":        {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 255}},
			"custom":     {DataType: aws.String("String.json"), StringValue: aws.String(`{"a":1}`)},
			"bar.prefix": {DataType: aws.String("String"), StringValue: aws.String("p")},
		},
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sent.MD5OfMessageAttributes == nil || sent.MD5OfMessageSystemAttributes == nil {
		t.Fatalf("send reply %+v", sent)
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    &url,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("got %d", len(out.Messages))
	}
	m := out.Messages[0]
	if *m.Body != "héllo <world> & \"friends\"\r\n" || *m.MessageId != *sent.MessageId {
		t.Fatalf("body %q", *m.Body)
	}
	if *m.MD5OfMessageAttributes != *sent.MD5OfMessageAttributes {
		t.Fatal("attribute MD5 differs between send and receive")
	}
	if string(m.MessageAttributes["bin"].BinaryValue) != "\x00\x01\x02\xff" || *m.MessageAttributes["custom"].DataType != "String.json" {
		t.Fatalf("attributes %v", m.MessageAttributes)
	}
	for _, k := range []string{"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp", "AWSTraceHeader"} {
		if m.Attributes[k] == "" {
			t.Errorf("system attribute %s missing: %v", k, m.Attributes)
		}
	}
	if m.Attributes["SenderId"] != "AKIDTEST" {
		t.Errorf("SenderId %q", m.Attributes["SenderId"])
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String("bogus")})
	apiErr(t, err, "ReceiptHandleIsInvalid", `The input receipt handle "bogus" is not a valid receipt handle.`)

	// Selection by prefix and by name, with the MD5 over what was selected.
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("sel"), MessageAttributes: map[string]types.MessageAttributeValue{
		"bar.a": {DataType: aws.String("String"), StringValue: aws.String("1")},
		"bar.b": {DataType: aws.String("Number"), StringValue: aws.String("2")},
		"foo":   {DataType: aws.String("String"), StringValue: aws.String("3")},
	}}); err != nil {
		t.Fatal(err)
	}
	out, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: []string{"bar.*"}})
	if err != nil || len(out.Messages) != 1 || len(out.Messages[0].MessageAttributes) != 2 {
		t.Fatalf("prefix selection: %v %v", out, err)
	}
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 11})
	apiErr(t, err, "InvalidParameterValue", "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.")
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 21})
	apiErr(t, err, "InvalidParameterValue", "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.")
}

func TestSDKSendErrors(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	url := createQueue(t, c, "errs", map[string]string{"MaximumMessageSize": "1024"})
	cases := []struct {
		name string
		in   sqs.SendMessageInput
		code string
		msg  string
	}{
		{"too long", sqs.SendMessageInput{MessageBody: aws.String(strings.Repeat("a", 1025))}, "InvalidParameterValue", "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."},
		{"bad chars", sqs.SendMessageInput{MessageBody: aws.String("a\u0001")}, "InvalidMessageContents", "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"},
		{"delay", sqs.SendMessageInput{MessageBody: aws.String("a"), DelaySeconds: 901}, "InvalidParameterValue", ""},
		{"empty string attribute", sqs.SendMessageInput{MessageBody: aws.String("a"), MessageAttributes: map[string]types.MessageAttributeValue{"n": {DataType: aws.String("String"), StringValue: aws.String("")}}}, "InvalidParameterValue", "Message (user) attribute 'n' must contain a non-empty value of type 'String'."},
		{"dedup on standard", sqs.SendMessageInput{MessageBody: aws.String("a"), MessageDeduplicationId: aws.String("d")}, "InvalidParameterValue", "Value d for parameter MessageDeduplicationId is invalid. Reason: The request includes a parameter that is not valid for this queue type."},
	}
	for _, tc := range cases {
		in := tc.in
		in.QueueUrl = &url
		_, err := c.SendMessage(ctx, &in)
		apiErr(t, err, tc.code, tc.msg)
	}
	attrs, _ := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages"}})
	if attrs.Attributes["ApproximateNumberOfMessages"] != "0" {
		t.Fatal("a rejected message was stored")
	}
}

func TestSDKBatches(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	url := createQueue(t, c, "batches", nil)
	sent, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("one")},
		{Id: aws.String("b"), MessageBody: aws.String("two"), MessageAttributes: map[string]types.MessageAttributeValue{"k": {DataType: aws.String("Number"), StringValue: aws.String("1")}}},
		{Id: aws.String("c"), MessageBody: aws.String("bad\u0000")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Successful) != 2 || len(sent.Failed) != 1 || *sent.Failed[0].Id != "c" || *sent.Failed[0].Code != "InvalidMessageContents" || !sent.Failed[0].SenderFault {
		t.Fatalf("batch result %+v", sent)
	}
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("x"), MessageBody: aws.String("1")}, {Id: aws.String("x"), MessageBody: aws.String("2")}}})
	apiErr(t, err, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id x repeated.")
	var eleven []types.SendMessageBatchRequestEntry
	for i := 0; i < 11; i++ {
		eleven = append(eleven, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String("m")})
	}
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: eleven})
	apiErr(t, err, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent 11.")
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("bad id!"), MessageBody: aws.String("1")}}})
	apiErr(t, err, "AWS.SimpleQueueService.InvalidBatchEntryId", "")

	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 2 {
		t.Fatalf("received %v %v", out, err)
	}
	vis, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("a"), ReceiptHandle: out.Messages[0].ReceiptHandle, VisibilityTimeout: 100},
		{Id: aws.String("bad"), ReceiptHandle: aws.String("nope"), VisibilityTimeout: 100},
	}})
	if err != nil || len(vis.Successful) != 1 || len(vis.Failed) != 1 || *vis.Failed[0].Code != "ReceiptHandleIsInvalid" {
		t.Fatalf("change visibility batch %+v %v", vis, err)
	}
	del, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("a"), ReceiptHandle: out.Messages[0].ReceiptHandle},
		{Id: aws.String("b"), ReceiptHandle: out.Messages[1].ReceiptHandle},
		{Id: aws.String("c"), ReceiptHandle: aws.String("nope")},
	}})
	if err != nil || len(del.Successful) != 2 || len(del.Failed) != 1 || *del.Failed[0].Id != "c" {
		t.Fatalf("delete batch %+v %v", del, err)
	}
}

func TestSDKVisibilityAndLongPollOnManualClock(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, _ := start(t, fanout.Options{Clock: clk})
	url := createQueue(t, c, "clocked", nil)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	first, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 60})
	if len(first.Messages) != 1 {
		t.Fatal("no message")
	}
	type result struct {
		out *sqs.ReceiveMessageOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		done <- result{out, err}
	}()
	for clk.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	clk.Advance(60 * time.Second) // the visibility timeout ends inside the long poll
	select {
	case r := <-done:
		if r.err != nil || len(r.out.Messages) != 1 || r.out.Messages[0].Attributes["ApproximateReceiveCount"] != "2" {
			t.Fatalf("long poll got %+v %v", r.out, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll did not wake when the visibility timeout ended")
	}
}

func TestSDKTagsPermissionsPurgeAndDLQ(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	dlq := createQueue(t, c, "tp-dlq", nil)
	url := createQueue(t, c, "tp", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:tp-dlq","maxReceiveCount":1}`})
	if _, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: map[string]string{"team": "a", "env": "dev"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"env"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
	if err != nil || len(tags.Tags) != 1 || tags.Tags["team"] != "a" {
		t.Fatalf("tags %v %v", tags, err)
	}
	if _, err := c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("p"), AWSAccountIds: []string{"111122223333"}, Actions: []string{"SendMessage", "ReceiveMessage"}}); err != nil {
		t.Fatal(err)
	}
	pol, _ := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"Policy"}})
	if !strings.Contains(pol.Attributes["Policy"], `"Action":["SQS:SendMessage","SQS:ReceiveMessage"]`) {
		t.Fatalf("policy %s", pol.Attributes["Policy"])
	}
	_, err = c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("p"), AWSAccountIds: []string{"1"}, Actions: []string{"SendMessage"}})
	apiErr(t, err, "InvalidParameterValue", "Value p for parameter Label is invalid. Reason: Already exists.")
	if _, err := c.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: &url, Label: aws.String("p")}); err != nil {
		t.Fatal(err)
	}
	srcs, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq})
	if err != nil || len(srcs.QueueUrls) != 1 || srcs.QueueUrls[0] != url {
		t.Fatalf("dlq sources %v %v", srcs, err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("poison")}); err != nil {
		t.Fatal(err)
	}
	r1, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
	// The SDK leaves VisibilityTimeout 0 out of the request: make it visible again explicitly.
	if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: r1.Messages[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	r2, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
	r3, _ := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &dlq, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"DeadLetterQueueSourceArn"}})
	if len(r1.Messages) != 1 || len(r2.Messages) != 0 || len(r3.Messages) != 1 || r3.Messages[0].Attributes["DeadLetterQueueSourceArn"] != "arn:aws:sqs:us-east-1:000000000000:tp" {
		t.Fatalf("redrive: %d %d %+v", len(r1.Messages), len(r2.Messages), r3.Messages)
	}
	if _, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &dlq}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &dlq})
	apiErr(t, err, "AWS.SimpleQueueService.PurgeQueueInProgress", "Only one PurgeQueue operation on tp-dlq is allowed every 60 seconds.")
}
