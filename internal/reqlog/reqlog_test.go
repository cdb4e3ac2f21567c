package reqlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/reqlog"
	"github.com/fanout/fanout/internal/sdktest"
)

// lockedBuffer is a log sink the server's goroutines may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if m["msg"] == "aws call" {
			out = append(out, m)
		}
	}
	return out
}

func start(t *testing.T, level slog.Level) (*fanout.Server, *lockedBuffer) {
	t.Helper()
	buf := &lockedBuffer{}
	srv, err := fanout.Start(context.Background(), fanout.Options{AllowUnsigned: true, Logger: slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: level}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, buf
}

func TestEveryCallLogsOneLineAtDebug(t *testing.T) {
	t.Parallel()
	srv, buf := start(t, slog.LevelDebug)
	ctx := context.Background()
	cfg := sdktest.Config()
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.URL()) })
	n := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(srv.URL()) })

	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("logged")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: out.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: out.QueueUrl}); err == nil {
		t.Fatal("second purge within 60 s succeeded")
	}
	if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("logged")}); err == nil {
		t.Fatal("re-creating at once succeeded")
	}
	if _, err := n.Publish(ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:missing"), Message: aws.String("x")}); err == nil {
		t.Fatal("publish to a missing topic succeeded")
	}
	// A Query call over plain HTTP, and one the dispatcher refuses.
	resp, err := http.PostForm(srv.URL(), map[string][]string{"Action": {"ListQueues"}, "Version": {"2012-11-05"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.PostForm(srv.URL(), map[string][]string{"Nothing": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	lines := buf.lines(t)
	want := []struct{ level, service, action, resource, code, disable string }{
		{"DEBUG", "sqs", "CreateQueue", "logged", "", ""},
		{"DEBUG", "sqs", "PurgeQueue", "logged", "", ""},
		{"INFO", "sqs", "PurgeQueue", "logged", "PurgeQueueInProgress", "--no-purge-wait (FANOUT_NO_PURGE_WAIT)"},
		{"DEBUG", "sqs", "DeleteQueue", "logged", "", ""},
		{"INFO", "sqs", "CreateQueue", "logged", "QueueDeletedRecently", "--no-recreate-wait (FANOUT_NO_RECREATE_WAIT)"},
		{"INFO", "sns", "Publish", "missing", "NotFound", ""},
		{"DEBUG", "sqs", "ListQueues", "", "", ""},
		{"INFO", "-", "", "", "MissingAction", ""},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), len(want), lines)
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	for i, w := range want {
		l := lines[i]
		res := str(l, "queue") + str(l, "topic")
		if str(l, "level") != w.level || str(l, "service") != w.service || str(l, "action") != w.action || res != w.resource ||
			str(l, "error") != w.code || str(l, "disable") != w.disable || str(l, "request_id") == "" || l["status"] == nil || l["ms"] == nil {
			t.Errorf("line %d: %v, want %+v", i, l, w)
		}
	}
}

func TestInfoLevelLogsOnlyFailures(t *testing.T) {
	t.Parallel()
	srv, buf := start(t, slog.LevelInfo)
	resp, err := http.PostForm(srv.URL(), map[string][]string{"Action": {"ListQueues"}, "Version": {"2012-11-05"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.PostForm(srv.URL(), map[string][]string{"Action": {"GetQueueUrl"}, "QueueName": {"nope"}, "Version": {"2012-11-05"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	lines := buf.lines(t)
	if len(lines) != 1 || lines[0]["action"] != "GetQueueUrl" || lines[0]["error"] != "AWS.SimpleQueueService.NonExistentQueue" || lines[0]["status"] != 400.0 {
		t.Fatalf("%v", lines)
	}
}

func TestNoLoggerNoWrapper(t *testing.T) {
	t.Parallel()
	h := &struct{ http.Handler }{http.NotFoundHandler()}
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if got := reqlog.Wrap(h, quiet, nil); got != http.Handler(h) {
		t.Errorf("a logger above info got a wrapper")
	}
	if got := reqlog.Wrap(h, nil, nil); got != http.Handler(h) {
		t.Errorf("no logger got a wrapper")
	}
}
