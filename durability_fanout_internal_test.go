package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout/delivery"
)

// hooks are HTTP endpoints, one a path, that hand over their confirmation
// tokens, keep each notification's MessageId and Message, and fail the
// notifications of a path while it is failing.
type hooks struct {
	srv     *httptest.Server
	tokens  chan string
	mu      sync.Mutex
	failing map[string]bool
	got     map[string][]string // path -> MessageId + " " + Message, in order
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{tokens: make(chan string, 10), failing: map[string]bool{}, got: map[string][]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct{ Token, MessageId, Message string }
		_ = json.Unmarshal(body, &m)
		if r.Header.Get("x-amz-sns-message-type") == delivery.TypeSubscriptionConfirmation {
			h.tokens <- m.Token
			return
		}
		h.mu.Lock()
		h.got[r.URL.Path] = append(h.got[r.URL.Path], m.MessageId+" "+m.Message)
		fail := h.failing[r.URL.Path]
		h.mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hooks) fail(path string, on bool) {
	h.mu.Lock()
	h.failing[path] = on
	h.mu.Unlock()
}

func (h *hooks) received(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got[path]...)
}

// bodyCount is how many times body is in the files of dir.
func bodyCount(t *testing.T, dir, body string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		n += bytes.Count(b, []byte(body))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A Publish to three HTTP subscriptions, one delivered at once and two
// retrying, keeps its body once on disk (in the log, then in the
// snapshot); after a crash each retry comes at its due time with the same
// MessageId and Message, and once every delivery ended the body is gone.
func TestDataDirStoresAPublishOnceForItsHTTPDeliveries(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := newHooks(t)
	s := startOn(t, dir)
	c := snsAs(s, "AKIDTEST", "us-east-1")
	topic, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a", "/b", "/c"} {
		if _, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(h.srv.URL + p)}); err != nil {
			t.Fatal(err)
		}
		token := <-h.tokens
		if _, err := c.ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: &token}); err != nil {
			t.Fatal(err)
		}
	}
	h.fail("/b", true)
	h.fail("/c", true)
	body := "once" + strings.Repeat("-once", 204) // 1 KiB
	out, err := c.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(body)})
	if err != nil {
		t.Fatal(err)
	}
	want := aws.ToString(out.MessageId) + " " + body
	settled(t, s)
	if err := s.store.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := bodyCount(t, dir, body); n != 1 {
		t.Fatalf("the data dir holds the body %d times for 3 deliveries, 2 of them retrying: want once", n)
	}
	if err := s.store.Compact(); err != nil {
		t.Fatal(err)
	}
	if n := bodyCount(t, dir, body); n != 1 {
		t.Fatalf("after a compaction the data dir holds the body %d times: want once", n)
	}
	crashed := copyDir(t, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	h.fail("/c", false)
	s = startOn(t, crashed)
	advance(t, s, "19s")
	if b, cc := h.received("/b"), h.received("/c"); len(b) != 1 || len(cc) != 1 {
		t.Fatalf("before the retries were due: b got %d, c %d", len(b), len(cc))
	}
	advance(t, s, "1s") // HTTP's default policy: 20 s between attempts
	if cc := h.received("/c"); len(cc) != 2 || cc[1] != want {
		t.Fatalf("c received %d notifications, the last %.40q: want 2, of %.40q", len(cc), cc[len(cc)-1], want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOn(t, crashed)
	defer s.Close()
	advance(t, s, "20s")
	advance(t, s, "20s") // b's fourth and last attempt
	b := h.received("/b")
	if a := h.received("/a"); len(a) != 1 || a[0] != want || len(b) != 4 {
		t.Fatalf("a received %d, b %d notifications: want 1 and the policy's 4", len(a), len(b))
	}
	for _, got := range b {
		if got != want {
			t.Fatalf("b received %.40q, want %.40q", got, want)
		}
	}
	if err := s.store.Compact(); err != nil {
		t.Fatal(err)
	}
	if n := bodyCount(t, crashed, body); n != 0 || s.deliveries.Scheduled() != 0 {
		t.Fatalf("after every delivery ended the data dir holds the body %d times, %d retries scheduled", n, s.deliveries.Scheduled())
	}
}
