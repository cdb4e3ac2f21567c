package fanout

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/sdktest"
)

// faultyDisk opens log segments that refuse writes, as a full disk does,
// while full is set.
type faultyDisk struct{ full atomic.Bool }

func (d *faultyDisk) open(path string) (oplog.SegmentFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return faultyFile{f, d}, nil
}

type faultyFile struct {
	*os.File
	disk *faultyDisk
}

func (f faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if f.disk.full.Load() {
		n, _ := f.File.WriteAt(p[:len(p)/2], off) // part of it lands, as on a real full disk
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(p, off)
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// isInternalError reports whether err is AWS's 500 InternalError.
func isInternalError(err error) bool {
	return sdktest.IsError(err, "InternalError", http.StatusInternalServerError)
}

func topicNames(t *testing.T, c *sns.Client) []string {
	t.Helper()
	out, err := c.ListTopics(context.Background(), &sns.ListTopicsInput{})
	if err != nil {
		t.Fatalf("ListTopics: %v", err)
	}
	var names []string
	for _, tp := range out.Topics {
		arn := aws.ToString(tp.TopicArn)
		names = append(names, arn[strings.LastIndexByte(arn, ':')+1:])
	}
	sort.Strings(names)
	return names
}

// A disk that refuses writes: SNS calls that change state answer 500
// InternalError and change nothing, in memory or on disk; reads go on;
// the log says why, once; when the disk takes writes again so do the calls.
func TestFullDiskRefusesSNSWritesAndServesReads(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	disk := &faultyDisk{}
	var logged syncBuffer
	s, err := Start(ctx, Options{DataDir: dir, openSegment: disk.open,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	c := sns.NewFromConfig(sdktest.NoRetry(), func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	kept, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("kept"), Attributes: map[string]string{"DisplayName": "before"}})
	if err != nil {
		t.Fatal(err)
	}

	disk.full.Store(true)
	if _, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("refused")}); !isInternalError(err) {
		t.Fatalf("CreateTopic on a full disk: %v, want 500 InternalError", err)
	}
	if _, err := c.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: kept.TopicArn,
		AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("refused")}); !isInternalError(err) {
		t.Fatalf("SetTopicAttributes on a full disk: %v, want 500 InternalError", err)
	}
	if got := topicNames(t, c); strings.Join(got, ",") != "kept" {
		t.Errorf("topics on a full disk: %v, want only kept", got)
	}
	attrs, err := c.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: kept.TopicArn})
	if err != nil || attrs.Attributes["DisplayName"] != "before" {
		t.Errorf("GetTopicAttributes on a full disk: %v %v, want DisplayName before", attrs, err)
	}
	if log := logged.String(); !strings.Contains(log, "no space left on device") || !strings.Contains(log, "answer 500 (nothing unstored is acknowledged)") {
		t.Errorf("no log line saying the disk refuses writes:\n%s", log)
	}

	disk.full.Store(false)
	if _, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("after")}); err != nil {
		t.Fatalf("CreateTopic once the disk has room: %v", err)
	}
	if log := logged.String(); !strings.Contains(log, "writes succeed again") {
		t.Errorf("no log line saying writes succeed again:\n%s", log)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c = sns.NewFromConfig(sdktest.NoRetry(), func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	if got := topicNames(t, c); strings.Join(got, ",") != "after,kept" {
		t.Errorf("topics after a restart: %v, want after,kept", got)
	}
	attrs, err = c.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: kept.TopicArn})
	if err != nil || attrs.Attributes["DisplayName"] != "before" {
		t.Errorf("kept after a restart: %v %v, want DisplayName before", attrs, err)
	}
}

// Close may run twice (a signal's context and the command both close the
// server): the second is quiet.
func TestCloseTwiceWithADataDir(t *testing.T) {
	var logged syncBuffer
	s, err := Start(context.Background(), Options{DataDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if logged.String() != "" {
		t.Errorf("closing twice logged:\n%s", logged.String())
	}
}

// A disk that refuses writes, SQS: sends (one or a batch, over AWS JSON
// and over Query), deletes and receives that take messages answer 500
// InternalFailure; GetQueueAttributes, ListQueues, an empty receive and
// the admin view go on; once the disk has room, sends work again, and a
// restart brings back exactly the acknowledged messages.
func TestFullDiskRefusesSQSWritesAndServesReads(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	disk := &faultyDisk{}
	start := func(o Options) (*Server, *sqs.Client) {
		o.DataDir = dir
		s, err := Start(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return s, sqs.NewFromConfig(sdktest.NoRetry(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	}
	s, c := start(Options{openSegment: disk.open})
	isFailure := func(err error) bool { return sdktest.IsError(err, "InternalFailure", http.StatusInternalServerError) }
	mk := func(name string) string {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.QueueUrl)
	}
	q, empty, recv := mk("work"), mk("empty"), mk("recv")
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &recv, MessageBody: aws.String("to receive")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q, VisibilityTimeout: 0})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("receive: %v %v", got, err)
	}
	handle := got.Messages[0].ReceiptHandle

	disk.full.Store(true)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("refused")}); !isFailure(err) {
		t.Errorf("SendMessage on a full disk: %v, want 500 InternalFailure", err)
	}
	if _, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q, Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("refused-a")}, {Id: aws.String("b"), MessageBody: aws.String("refused-b")}}}); !isFailure(err) {
		t.Errorf("SendMessageBatch on a full disk: %v, want 500 InternalFailure", err)
	}
	resp, err := sdktest.PostForm(s.URL()+"/000000000000/work", url.Values{"Action": {"SendMessage"}, "MessageBody": {"refused-query"}}, "sqs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "<Code>InternalFailure</Code>") {
		t.Errorf("Query SendMessage on a full disk: %d %s, want 500 InternalFailure", resp.StatusCode, body)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q, ReceiptHandle: handle}); !isFailure(err) {
		t.Errorf("DeleteMessage on a full disk: %v, want 500 InternalFailure", err)
	}
	// A receive that takes a message changes state (its receive count, its
	// visibility): it is a write.
	if _, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &recv}); !isFailure(err) {
		t.Errorf("ReceiveMessage of a message on a full disk: %v, want 500 InternalFailure", err)
	}
	// Reads: nothing of the refused sends shows.
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q, AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	if err != nil {
		t.Errorf("GetQueueAttributes on a full disk: %v", err)
	} else if n := attrs.Attributes["ApproximateNumberOfMessages"]; n != "0" && n != "1" {
		t.Errorf("ApproximateNumberOfMessages %s on a full disk: the refused sends show", n)
	}
	if l, err := c.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil || len(l.QueueUrls) != 3 {
		t.Errorf("ListQueues on a full disk: %v %v", l, err)
	}
	if e, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &empty}); err != nil || len(e.Messages) != 0 {
		t.Errorf("an empty receive on a full disk: %v %v, want no messages and no error", e, err)
	}
	if resp, err := http.Get(s.URL() + "/_fanout/sqs/queues"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /_fanout/sqs/queues on a full disk: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	disk.full.Store(false)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("after")}); err != nil {
		t.Fatalf("SendMessage once the disk has room: %v", err)
	}
	s.Close()

	s, c = start(Options{})
	defer s.Close()
	// "kept" is in flight still: its delete was refused (AWS's 500 leaves
	// the outcome open, and the client retries), and its handle deletes it.
	attrs, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q, AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "1" || attrs.Attributes["ApproximateNumberOfMessagesNotVisible"] != "1" {
		t.Errorf("after a restart: %v %v, want 1 visible (after) and 1 in flight (kept)", attrs, err)
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q, MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "after" {
		t.Errorf("receive after a restart: %v %v, want after", out, err)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q, ReceiptHandle: handle}); err != nil {
		t.Errorf("the refused delete, retried after a restart: %v", err)
	}
}
