// Package sdktest configures aws-sdk-go-v2 clients for fanout's tests.
package sdktest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// HTTPClient returns an HTTP client for SDK clients that talk to a fanout on
// loopback. It works around a client-side race in smithy-go: the SDK closes
// the request body as soon as the response arrives, and if net/http is still
// inside the body's WriteTo it takes the io.EOF for a write error and closes
// the connection while the response is read ("deserialization failed ... use
// of closed network connection", aws/aws-sdk-go-v2#2737). On a fast loopback
// server that happens about once in thousands of calls; a received batch lost
// that way stays invisible for its visibility timeout and makes tests flaky.
func HTTPClient() *http.Client {
	return HTTPClientWith(http.DefaultTransport)
}

// HTTPClientWith is HTTPClient over another transport (one that trusts a
// test certificate, say).
func HTTPClientWith(tr http.RoundTripper) *http.Client {
	return &http.Client{Transport: hideWriterTo{tr}}
}

// hideWriterTo passes requests on with a body that has only Read and Close,
// so net/http reads it instead of calling the SDK body's WriteTo.
type hideWriterTo struct{ next http.RoundTripper }

func (t hideWriterTo) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return t.next.RoundTrip(req)
	}
	r := *req // RoundTrip must not modify the caller's request
	r.Body = struct{ io.ReadCloser }{req.Body}
	return t.next.RoundTrip(&r)
}

// Config returns an aws.Config for us-east-1 with static credentials and
// HTTPClient.
func Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		HTTPClient:  HTTPClient(),
	}
}

// Sign signs req, whose body is body, with the SDK's own SigV4 signer, as
// an SDK client of service ("sqs" or "sns") does, with Config's credentials:
// fanout refuses unsigned Query calls.
func Sign(req *http.Request, body []byte, service string) {
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, "us-east-1", time.Now()); err != nil {
		panic(err) // SignHTTP fails only on a request it cannot read
	}
}

// PostForm sends a signed Query call: form as the body of a POST to url.
func PostForm(url string, form url.Values, service string) (*http.Response, error) {
	body := form.Encode()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	Sign(req, []byte(body), service)
	return http.DefaultClient.Do(req)
}

// NoRetry is Config for a client that reports the first answer it gets,
// without retrying a 500 or a throttle.
func NoRetry() aws.Config {
	cfg := Config()
	cfg.RetryMaxAttempts = 1
	return cfg
}

// IsError reports whether err is the AWS error code with HTTP status.
func IsError(err error, code string, status int) bool {
	var ae smithy.APIError
	var re *awshttp.ResponseError
	return errors.As(err, &ae) && ae.ErrorCode() == code &&
		errors.As(err, &re) && re.HTTPStatusCode() == status
}
