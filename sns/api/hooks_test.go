package api_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout/delivery"
)

// hook is a local HTTP endpoint that records what SNS posts to it and
// answers with the status its answer function picks.
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []hookRequest
	notify chan struct{}
	// answer picks the status of the n-th notification (1-based);
	// confirmations always get 200.
	answer func(n int) int
}

// hookRequest is one request a hook received.
type hookRequest struct {
	Path   string
	Header http.Header
	Body   string
}

func (r hookRequest) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
	}
	return v
}

// newHook starts a hook, stopped when the test ends.
func newHook(t *testing.T, tls bool, answer func(n int) int) *hook {
	t.Helper()
	h := &hook{notify: make(chan struct{}, 1000), answer: answer}
	notifications := 0
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.reqs = append(h.reqs, hookRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: string(b)})
		status := http.StatusOK
		if r.Header.Get("x-amz-sns-message-type") != delivery.TypeSubscriptionConfirmation &&
			r.Header.Get("x-amz-sns-message-type") != delivery.TypeUnsubscribeConfirmation {
			notifications++
			if h.answer != nil {
				status = h.answer(notifications)
			}
		}
		h.mu.Unlock()
		w.WriteHeader(status)
		h.notify <- struct{}{}
	})
	if tls {
		h.Server = httptest.NewTLSServer(handler)
	} else {
		h.Server = httptest.NewServer(handler)
	}
	t.Cleanup(h.Close)
	return h
}

// sink is a hook that accepts everything.
func sink(t *testing.T, tls bool) *hook { return newHook(t, tls, nil) }

// requests returns what the hook received so far, of one message type ("" for all).
func (h *hook) requests(typ string) []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookRequest
	for _, r := range h.reqs {
		if typ == "" || r.Header.Get("x-amz-sns-message-type") == typ {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits (on the hook's own signal, not a sleep) until it has n
// requests of type typ.
func (h *hook) waitFor(t *testing.T, typ string, n int) []hookRequest {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if got := h.requests(typ); len(got) >= n {
			return got
		}
		select {
		case <-h.notify:
		case <-deadline:
			t.Fatalf("hook got %d %s requests, want %d", len(h.requests(typ)), typ, n)
		}
	}
}

// settle waits until the server's deliveries due now are done.
func (e *env) settle(t *testing.T) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.srv.Deliveries().Settle(c); err != nil {
		t.Fatal(err)
	}
}

// advance moves the test's manual clock and waits for what fell due.
func (e *env) advance(t *testing.T, d time.Duration) {
	t.Helper()
	e.clk.Advance(d)
	e.settle(t)
}

// postClock moves the clock through the admin API.
func (e *env) postClock(t *testing.T, d string) {
	t.Helper()
	resp, err := http.Post(e.srv.URL()+"/_fanout/clock", "application/json", strings.NewReader(`{"advance":"`+d+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /_fanout/clock: %s", resp.Status)
	}
}

// records reads GET /_fanout/deliveries with a query string.
func (e *env) records(t *testing.T, query string) []delivery.Record {
	t.Helper()
	_, body := get(t, e.srv.URL()+"/_fanout/deliveries?"+query)
	var out struct{ Deliveries []delivery.Record }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return out.Deliveries
}

// subscribeHook subscribes an HTTP/S endpoint and confirms it with the
// token from the SubscriptionConfirmation it received, through the SDK.
func (e *env) subscribeHook(t *testing.T, topicArn string, h *hook, attrs map[string]string) string {
	t.Helper()
	protocol := "http"
	if strings.HasPrefix(h.URL, "https:") {
		protocol = "https"
	}
	before := len(h.requests(delivery.TypeSubscriptionConfirmation))
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{
		TopicArn: aws.String(topicArn), Protocol: aws.String(protocol), Endpoint: aws.String(h.URL + "/sns"), Attributes: attrs,
	}); err != nil {
		t.Fatal(err)
	}
	conf := h.waitFor(t, delivery.TypeSubscriptionConfirmation, before+1)[before].json(t)
	out, err := e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topicArn), Token: aws.String(conf["Token"].(string))})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.SubscriptionArn)
}

// verifyKeys checks an SHA1withRSA SNS signature over keys against the certificate the
// message links to, as a subscriber would.
func verifyKeys(t *testing.T, msg map[string]any, certURL string, keys []string) {
	t.Helper()
	_, pemText := get(t, certURL)
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		t.Fatalf("no certificate at %s", certURL)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range keys {
		if v, ok := msg[k].(string); ok {
			b.WriteString(k + "\n" + v + "\n")
		}
	}
	sig, err := base64.StdEncoding.DecodeString(msg["Signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(b.String()))
	if err := rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), crypto.SHA1, sum[:], sig); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
}
