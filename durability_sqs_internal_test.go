package fanout

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/sdktest"
)

// copyDataDir copies a running server's data dir as it is on disk now:
// every call acknowledged so far is there, as after a kill -9. The lock
// file stays behind.
func copyDataDir(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "LOCK" || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// sqsState is what a client reads of every queue without changing it.
type sqsState struct {
	Queues []string
	Attrs  map[string]map[string]string
	Tags   map[string]map[string]string
}

func readSQS(t *testing.T, c *sqs.Client) sqsState {
	t.Helper()
	ctx := context.Background()
	out, err := c.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatal(err)
	}
	st := sqsState{Attrs: map[string]map[string]string{}, Tags: map[string]map[string]string{}}
	for _, u := range out.QueueUrls {
		st.Queues = append(st.Queues, u[strings.LastIndexByte(u, '/')+1:])
	}
	sort.Strings(st.Queues)
	for _, u := range out.QueueUrls {
		a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []sqstypes.QueueAttributeName{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		tags, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
		if err != nil {
			t.Fatal(err)
		}
		name := u[strings.LastIndexByte(u, '/')+1:]
		st.Attrs[name], st.Tags[name] = a.Attributes, tags.Tags
	}
	return st
}

// A restart on the same data dir (here: a copy taken while the first
// server runs, as a kill -9 leaves it) brings back every queue and message
// as an SDK sees them: attributes, tags and policy, messages in every state
// with their attributes, MD5s, receive counts and timestamps, receipt
// handles that still delete, delays that end on time, FIFO order and
// deduplication, a name deleted recently, and a move task that resumes.
func TestDataDirRestoresQueuesAndMessages(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	start := func(dir string) (*Server, *sqs.Client) {
		s, err := Start(ctx, Options{DataDir: dir, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, sqs.NewFromConfig(sdktest.Config(), func(o *sqs.Options) {
			o.BaseEndpoint = aws.String(s.URL())
			o.Retryer = aws.NopRetryer{}
		})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	_, c := start(dir)
	create := func(name string, attrs map[string]string, tags map[string]string) string {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs, Tags: tags})
		must(err)
		return aws.ToString(out.QueueUrl)
	}
	arnOf := func(u string) string {
		a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
		must(err)
		return a.Attributes["QueueArn"]
	}
	dlq := create("orders-dlq", nil, nil)
	orders := create("orders", map[string]string{"VisibilityTimeout": "60",
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arnOf(dlq) + `","maxReceiveCount":"5"}`}, map[string]string{"team": "payments"})
	_, err := c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &orders, Label: aws.String("peer"),
		AWSAccountIds: []string{"111111111111"}, Actions: []string{"SendMessage"}})
	must(err)
	jobs := create("jobs.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}, nil)
	clk.Advance(time.Second)

	attrs := map[string]sqstypes.MessageAttributeValue{
		"kind":  {DataType: aws.String("String"), StringValue: aws.String("order")},
		"n":     {DataType: aws.String("Number.int"), StringValue: aws.String("42")},
		"bytes": {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2}},
	}
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &orders, MessageBody: aws.String("first"), MessageAttributes: attrs,
		MessageSystemAttributes: map[string]sqstypes.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String("Root=1-abc")}}})
	must(err)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &orders, Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("second")}, {Id: aws.String("b"), MessageBody: aws.String("third")},
		{Id: aws.String("c"), MessageBody: aws.String("later"), DelaySeconds: 120}}})
	must(err)
	clk.Advance(time.Second)
	all := []sqstypes.MessageSystemAttributeName{"All"}
	recv := func(u string, n int32, vis int32) []sqstypes.Message {
		t.Helper()
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &u, MaxNumberOfMessages: n, VisibilityTimeout: vis,
			MessageSystemAttributeNames: all, MessageAttributeNames: []string{"All"}})
		must(err)
		if vis == 0 && len(out.Messages) > 0 { // the SDK does not send a zero VisibilityTimeout
			var es []sqstypes.ChangeMessageVisibilityBatchRequestEntry
			for i, m := range out.Messages {
				es = append(es, sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(string(rune('a' + i))), ReceiptHandle: m.ReceiptHandle})
			}
			res, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &u, Entries: es})
			must(err)
			if len(res.Failed) > 0 {
				t.Fatalf("ChangeMessageVisibilityBatch: %+v", res.Failed)
			}
		}
		return out.Messages
	}
	// "first" received and made visible again (one receive counted),
	// "second" in flight, "third" visible, "later" delayed.
	two := recv(orders, 2, 300)
	if len(two) != 2 || aws.ToString(two[0].Body) != "first" || aws.ToString(two[1].Body) != "second" {
		t.Fatalf("set-up receive: %+v", two)
	}
	first, inflight := two[:1], two[1:]
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &orders, ReceiptHandle: first[0].ReceiptHandle, VisibilityTimeout: 0})
	must(err)
	// FIFO: g1 locked by "a" in flight, "b" behind it, "c" in g2.
	for _, m := range [][2]string{{"g1", "a"}, {"g1", "b"}, {"g2", "c"}} {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &jobs, MessageGroupId: aws.String(m[0]), MessageBody: aws.String(m[1])})
		must(err)
	}
	fifoA := recv(jobs, 1, 300)
	dupBefore, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &jobs, MessageGroupId: aws.String("g2"), MessageBody: aws.String("c")})
	must(err)
	// A queue deleted a moment ago, and a move task half done.
	tmp := create("tmp", nil, nil)
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &tmp})
	must(err)
	mdlq := create("mdlq", nil, nil)
	src := create("src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arnOf(mdlq) + `","maxReceiveCount":"1"}`}, nil)
	for _, b := range []string{"p1", "p2"} {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &src, MessageBody: aws.String(b)})
		must(err)
	}
	recv(src, 10, 0)
	if got := recv(src, 10, 0); len(got) != 0 {
		t.Fatalf("received past maxReceiveCount: %v", got)
	}
	_, err = c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(arnOf(mdlq)), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
	must(err)
	clk.Advance(time.Second)
	before := readSQS(t, c)

	dir1 := copyDataDir(t, dir)
	_, c = start(dir1)
	if got := readSQS(t, c); !reflect.DeepEqual(got, before) {
		t.Fatalf("after the restart:\n%+v\nwant\n%+v", got, before)
	}
	// Handles from before the restart: the in-flight one still changes
	// and deletes its message.
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &orders, ReceiptHandle: inflight[0].ReceiptHandle, VisibilityTimeout: 400})
	must(err)
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &orders, ReceiptHandle: inflight[0].ReceiptHandle})
	must(err)
	// The deleted name is still taken for its minute.
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("tmp")}); errorCode(err) != "AWS.SimpleQueueService.QueueDeletedRecently" && errorCode(err) != "QueueDeletedRecently" {
		t.Errorf("CreateQueue of a name deleted before the restart: %v", err)
	}
	got := recv(orders, 10, 600)
	if len(got) != 2 || aws.ToString(got[0].Body) != "first" || aws.ToString(got[1].Body) != "third" {
		t.Fatalf("visible after the restart: %+v", got)
	}
	m := got[0]
	if aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) || aws.ToString(m.MD5OfMessageAttributes) != aws.ToString(sent.MD5OfMessageAttributes) ||
		aws.ToString(m.MD5OfBody) != aws.ToString(sent.MD5OfMessageBody) || len(m.MessageAttributes) != 3 ||
		!reflect.DeepEqual(m.MessageAttributes["bytes"].BinaryValue, []byte{0, 1, 2}) || aws.ToString(m.MessageAttributes["n"].DataType) != "Number.int" {
		t.Errorf("first after the restart: %+v (sent %+v)", m, sent)
	}
	for _, a := range []string{"SentTimestamp", "ApproximateFirstReceiveTimestamp", "AWSTraceHeader", "SenderId"} {
		if m.Attributes[a] != first[0].Attributes[a] || m.Attributes[a] == "" {
			t.Errorf("%s after the restart %q, before %q", a, m.Attributes[a], first[0].Attributes[a])
		}
	}
	if m.Attributes["ApproximateReceiveCount"] != "2" {
		t.Errorf("ApproximateReceiveCount after the restart: %s, want 2", m.Attributes["ApproximateReceiveCount"])
	}
	// The delayed message appears when its delay ends, not before.
	clk.Advance(100 * time.Second)
	if got := recv(orders, 10, 30); len(got) != 0 {
		t.Errorf("before its delay ended: %+v", got)
	}
	clk.Advance(20 * time.Second)
	if got := recv(orders, 10, 30); len(got) != 1 || aws.ToString(got[0].Body) != "later" {
		t.Errorf("after its delay ended: %+v", got)
	}
	// FIFO: the duplicate is still one, g1 still locked until "a" goes,
	// then "b" comes, in order.
	dup, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &jobs, MessageGroupId: aws.String("g2"), MessageBody: aws.String("c")})
	must(err)
	if aws.ToString(dup.MessageId) != aws.ToString(dupBefore.MessageId) || aws.ToString(dup.SequenceNumber) != aws.ToString(dupBefore.SequenceNumber) {
		t.Errorf("a duplicate after the restart: %s %s, want %s %s", aws.ToString(dup.MessageId), aws.ToString(dup.SequenceNumber),
			aws.ToString(dupBefore.MessageId), aws.ToString(dupBefore.SequenceNumber))
	}
	if got := recv(jobs, 10, 300); len(got) != 1 || aws.ToString(got[0].Body) != "c" {
		t.Errorf("FIFO with g1 locked: %+v", got)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &jobs, ReceiptHandle: fifoA[0].ReceiptHandle})
	must(err)
	if got := recv(jobs, 10, 300); len(got) != 1 || aws.ToString(got[0].Body) != "b" || got[0].Attributes["SequenceNumber"] <= fifoA[0].Attributes["SequenceNumber"] {
		t.Errorf("FIFO after deleting g1's head: %+v", got)
	}
	// The move task resumes and finishes.
	clk.Advance(3 * time.Second)
	tasks, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(arnOf(mdlq))})
	must(err)
	if len(tasks.Results) != 1 || aws.ToString(tasks.Results[0].Status) != "COMPLETED" || tasks.Results[0].ApproximateNumberOfMessagesMoved != 2 {
		t.Errorf("move task after the restart: %+v", tasks.Results)
	}
	if got := recv(src, 10, 30); len(got) != 2 {
		t.Errorf("%d messages moved back, want 2", len(got))
	}
	// The Query protocol (AWS CLI 2.9) sees the same and deletes with a
	// handle from before a second restart.
	if _, err := os.Stat("/usr/bin/aws"); err == nil {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &orders, MessageBody: aws.String("cli")})
		must(err)
		held := recv(orders, 1, 300)
		if len(held) != 1 || aws.ToString(held[0].Body) != "cli" {
			t.Fatalf("nothing to hold: %+v", held)
		}
		s, c3 := start(copyDataDir(t, dir1))
		c = c3
		hidden := readSQS(t, c).Attrs["orders"]["ApproximateNumberOfMessagesNotVisible"]
		cli := func(args ...string) string {
			cmd := exec.Command("/usr/bin/aws", append([]string{"--endpoint-url", s.URL(), "--region", "us-east-1", "sqs"}, args...)...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=x",
				"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_MAX_ATTEMPTS=1", "AWS_PAGER=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("aws %s: %v %s", strings.Join(args, " "), err, out)
			}
			return string(out)
		}
		if out := cli("delete-message", "--queue-url", orders, "--receipt-handle", aws.ToString(held[0].ReceiptHandle)); out != "" {
			t.Errorf("delete-message: %s", out)
		}
		out := cli("get-queue-attributes", "--queue-url", orders, "--attribute-names", "ApproximateNumberOfMessagesNotVisible")
		if n, _ := strconv.Atoi(hidden); hidden == "" || !strings.Contains(out, `"ApproximateNumberOfMessagesNotVisible": "`+strconv.Itoa(n-1)+`"`) {
			t.Errorf("after deleting over Query (%s hidden before): %s", hidden, out)
		}
	}
}
