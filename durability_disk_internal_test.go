package fanout

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/sdktest"
)

// faultyDisk opens log segments that refuse writes, as a full disk does,
// while full is set.
type faultyDisk struct{ full atomic.Bool }

func (d *faultyDisk) open(path string) (oplog.SegmentFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	return faultyFile{f, d}, nil
}

type faultyFile struct {
	*os.File
	disk *faultyDisk
}

func (f faultyFile) Write(p []byte) (int, error) {
	if f.disk.full.Load() {
		n, _ := f.File.Write(p[:len(p)/2]) // part of it lands, as on a real full disk
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
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
	if log := logged.String(); !strings.Contains(log, "no space left on device") || !strings.Contains(log, "answer 500 InternalError") {
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
