package fanout_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

// raw sends req and returns status and body.
func raw(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func formRequest(t *testing.T, method, u, contentType, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

const formType = "application/x-www-form-urlencoded; charset=utf-8"

// TestBrowserDoor: the requests a web page can make a browser send without
// a CORS preflight (a GET, a form POST without an Authorization header, a
// text/plain POST) reach no AWS action; signed form POSTs, as every SDK and
// CLI sends them, do.
func TestBrowserDoor(t *testing.T) {
	t.Parallel()
	s := startServer(t, fanout.Options{})
	ep := s.URL() + "/"
	create := "Action=CreateTopic&Version=2010-03-31&Name=door"
	sqsCreate := "Action=CreateQueue&Version=2012-11-05&QueueName=door"

	// An unsigned form POST, the shape of a cross-site HTML form.
	code, body, _ := raw(t, formRequest(t, "POST", ep, formType, create))
	if code != 403 || !strings.Contains(body, `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>MissingAuthenticationToken</Code><Message>Request is missing Authentication Token</Message></Error>`) {
		t.Fatalf("unsigned SNS form: %d %s", code, body)
	}
	code, body, _ = raw(t, formRequest(t, "POST", ep, formType, sqsCreate))
	if code != 403 || !strings.Contains(body, `<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type><Code>MissingAuthenticationToken</Code><Message>Request is missing Authentication Token</Message><Detail/></Error>`) {
		t.Fatalf("unsigned SQS form: %d %s", code, body)
	}
	// An unsigned GET, the shape of an <img> or a link.
	code, body, _ = raw(t, formRequest(t, "GET", ep+"?"+sqsCreate, "", ""))
	if code != 403 || !strings.Contains(body, "<Code>MissingAuthenticationToken</Code>") {
		t.Fatalf("unsigned GET: %d %s", code, body)
	}
	// A signed GET: no page can add the header, but a presigned URL could
	// sit in an <img>, so GETs are refused whatever they carry.
	req := formRequest(t, "GET", ep+"?"+sqsCreate, "", "")
	sdktest.Sign(req, nil, "sqs")
	code, body, _ = raw(t, req)
	if code != 405 || !strings.Contains(body, "<Code>MethodNotAllowed</Code>") || !strings.Contains(body, "--allow-unsigned") {
		t.Fatalf("signed GET: %d %s", code, body)
	}
	// A signed POST whose body is not a form (text/plain is what a page can send).
	req = formRequest(t, "POST", ep+"?"+sqsCreate, "text/plain", "")
	sdktest.Sign(req, nil, "sqs")
	code, body, _ = raw(t, req)
	if code != 415 || !strings.Contains(body, "<Code>UnsupportedMediaType</Code>") {
		t.Fatalf("text/plain POST: %d %s", code, body)
	}
	// A malformed Authorization header gets AWS's IncompleteSignature.
	req = formRequest(t, "POST", ep, formType, sqsCreate)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x")
	code, body, _ = raw(t, req)
	if code != 400 || !strings.Contains(body, "<Code>IncompleteSignature</Code><Message>Authorization header requires &apos;Signature&apos; parameter.") &&
		!strings.Contains(body, "<Code>IncompleteSignature</Code><Message>Authorization header requires 'Signature' parameter.") {
		t.Fatalf("malformed Authorization: %d %s", code, body)
	}
	// Nothing was created by any of these.
	if got := len(s.SQS().ListQueues("")); got != 0 {
		t.Fatalf("%d queues created", got)
	}

	// Signed form POSTs work, with any credentials.
	req = formRequest(t, "POST", ep, formType, create)
	sdktest.Sign(req, []byte(create), "sns")
	if code, body, _ = raw(t, req); code != 200 || !strings.Contains(body, "<TopicArn>arn:aws:sns:us-east-1:000000000000:door</TopicArn>") {
		t.Fatalf("signed SNS form: %d %s", code, body)
	}
	// And so does a presigned one: the signature in the query string.
	req = formRequest(t, "POST", ep, formType, sqsCreate)
	sum := sha256.Sum256([]byte(sqsCreate))
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: "anything", SecretAccessKey: "x"},
		req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(signed, "X-Amz-Signature=") {
		t.Fatal(signed)
	}
	req = formRequest(t, "POST", signed, formType, sqsCreate)
	if code, body, _ = raw(t, req); code != 200 || !strings.Contains(body, "/000000000000/door</QueueUrl>") {
		t.Fatalf("presigned form: %d %s", code, body)
	}
}

// TestAllowUnsigned: --allow-unsigned lets old scripts post unsigned forms
// and GETs, as fanout did before.
func TestAllowUnsigned(t *testing.T) {
	t.Parallel()
	s := startServer(t, fanout.Options{AllowUnsigned: true})
	code, body, _ := raw(t, formRequest(t, "POST", s.URL()+"/", formType, "Action=CreateTopic&Version=2010-03-31&Name=open"))
	if code != 200 || !strings.Contains(body, ":open</TopicArn>") {
		t.Fatalf("%d %s", code, body)
	}
	q := url.Values{"Action": {"CreateQueue"}, "Version": {"2012-11-05"}, "QueueName": {"open"}}
	code, body, _ = raw(t, formRequest(t, "GET", s.URL()+"/?"+q.Encode(), "", ""))
	if code != 200 || !strings.Contains(body, "/000000000000/open</QueueUrl>") {
		t.Fatalf("%d %s", code, body)
	}
}

// TestCrossSiteSimpleRequests: a page of another site can make the browser
// send a form POST or a text/plain fetch unasked; with its Origin header
// fanout refuses it on every path, /_fanout/ included (the clock, the
// playground), presigned Query calls included.
func TestCrossSiteSimpleRequests(t *testing.T) {
	t.Parallel()
	s := startServer(t, fanout.Options{})
	before := s.Clock().Now()
	req := formRequest(t, "POST", s.URL()+"/_fanout/clock", "text/plain", `{"advance":"24h"}`)
	req.Header.Set("Origin", "https://evil.example")
	code, body, h := raw(t, req)
	if code != 403 || !strings.Contains(body, `fanout refuses requests from pages of origin "https://evil.example"`) || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("cross-site clock POST: %d %s", code, body)
	}
	if s.Clock().Now().Sub(before) > time.Hour {
		t.Fatal("the clock moved")
	}
	// A presigned form POST, which needs no header a page cannot send.
	body0 := "Action=CreateTopic&Version=2010-03-31&Name=cross"
	req = formRequest(t, "POST", s.URL()+"/", formType, body0)
	sum := sha256.Sum256([]byte(body0))
	u, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: "a", SecretAccessKey: "b"}, req, hex.EncodeToString(sum[:]), "sns", "us-east-1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req = formRequest(t, "POST", u, formType, body0)
	req.Header.Set("Origin", "null") // a sandboxed frame
	if code, body, _ = raw(t, req); code != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Fatalf("cross-site presigned POST: %d %s", code, body)
	}
	// fanout's own pages (same origin) may post.
	req = formRequest(t, "POST", s.URL()+"/_fanout/filter/test", "application/json", `{"policy":"{\"a\":[\"b\"]}"}`)
	req.Header.Set("Origin", s.URL())
	if code, body, _ = raw(t, req); code != 200 {
		t.Fatalf("same-origin POST: %d %s", code, body)
	}
}
