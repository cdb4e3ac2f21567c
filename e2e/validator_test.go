// Package e2e checks fanout against third-party software: here, that the
// npm package sns-validator, which many Node.js subscribers use, accepts
// the signatures fanout puts on subscription confirmations, notifications
// (SignatureVersion 1 and 2) and Lambda events.
//
// The test needs node and `npm ci` in this directory; without node_modules
// it skips, unless FANOUT_REQUIRE_NODE=1 (as in CI) makes that a failure.
package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

// catcher is an HTTP endpoint that keeps every body it is sent.
type catcher struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	got    chan struct{}
}

func newCatcher(t *testing.T) *catcher {
	c := &catcher{got: make(chan struct{}, 100)}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies = append(c.bodies, string(b))
		c.mu.Unlock()
		c.got <- struct{}{}
	}))
	t.Cleanup(c.Close)
	return c
}

// next waits for the next body.
func (c *catcher) next(t *testing.T, i int) string {
	t.Helper()
	for {
		c.mu.Lock()
		if len(c.bodies) > i {
			b := c.bodies[i]
			c.mu.Unlock()
			return b
		}
		c.mu.Unlock()
		select {
		case <-c.got:
		case <-time.After(20 * time.Second):
			t.Fatalf("endpoint got %d messages, want %d", i, i+1)
		}
	}
}

func TestSNSValidatorAcceptsFanoutSignatures(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("node_modules/sns-validator"); err != nil {
		if os.Getenv("FANOUT_REQUIRE_NODE") == "1" {
			t.Fatal("node_modules/sns-validator is missing: run npm ci in e2e/")
		}
		t.Skip("node_modules/sns-validator is missing (npm ci in e2e/); FANOUT_REQUIRE_NODE=1 makes this a failure")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}

	// sns-validator fetches the certificate over https only, from a host
	// its pattern allows: fanout is served over TLS here, its links point
	// there, and node trusts the test server's certificate.
	fn := newCatcher(t) // a Lambda function's hook
	ts := httptest.NewUnstartedServer(nil)
	base := "https://" + ts.Listener.Addr().String()
	srv, err := fanout.New(fanout.Options{PublicURL: base, Clock: clock.NewManual(time.Now()), Lambda: map[string]string{"f": fn.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts.Config.Handler = srv.Handler()
	ts.StartTLS()
	defer ts.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTPClient: ts.Client()}
	client := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(base) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var files []string
	save := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for _, version := range []string{"1", "2"} {
		hook := newCatcher(t)
		topic, err := client.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("validated-v" + version),
			Attributes: map[string]string{"SignatureVersion": version}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(hook.URL)}); err != nil {
			t.Fatal(err)
		}
		confirmation := hook.next(t, 0)
		save("confirmation-v"+version+".json", confirmation)
		var c struct{ Token string }
		_ = json.Unmarshal([]byte(confirmation), &c)
		if _, err := client.ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: aws.String(c.Token)}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Subject: aws.String("Checked"),
			Message:           aws.String("line one\n\"quoted\" é ☃ </tag>"),
			MessageAttributes: map[string]types.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}}); err != nil {
			t.Fatal(err)
		}
		save("notification-v"+version+".json", hook.next(t, 1))
	}

	// A Lambda event's Sns record, which sns-validator also takes.
	topic, err := client.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("validated-lambda")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("lambda"),
		Endpoint: aws.String("arn:aws:lambda:us-east-1:000000000000:function:f")}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("to a function")}); err != nil {
		t.Fatal(err)
	}
	var event struct {
		Records []struct{ Sns json.RawMessage }
	}
	if err := json.Unmarshal([]byte(fn.next(t, 0)), &event); err != nil || len(event.Records) != 1 {
		t.Fatalf("Lambda event: %v", err)
	}
	save("lambda.json", string(event.Records[0].Sns))

	host := regexp.QuoteMeta(strings.TrimPrefix(base, "https://"))
	run := func(files ...string) (string, error) {
		cmd := exec.CommandContext(ctx, node, append([]string{"validate.js", "^" + host + "$"}, files...)...)
		cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(files...)
	t.Log("\n" + out)
	if err != nil {
		t.Fatalf("sns-validator rejected fanout's messages: %v", err)
	}
	if n := strings.Count(out, "valid "); n != len(files) || strings.Contains(out, "invalid") {
		t.Fatalf("%d of %d messages valid", n, len(files))
	}

	// And it is really checking: a changed message fails.
	b, _ := os.ReadFile(files[1])
	tampered := filepath.Join(dir, "tampered.json")
	_ = os.WriteFile(tampered, []byte(strings.Replace(string(b), "line one", "line 1", 1)), 0o600)
	if out, err := run(tampered); err == nil || !strings.Contains(out, "signature is invalid") {
		t.Fatalf("a tampered message passed: %s", out)
	}
}
