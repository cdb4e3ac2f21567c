// Package sdktest configures aws-sdk-go-v2 clients for fanout's tests.
package sdktest

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
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
	return &http.Client{Transport: hideWriterTo{http.DefaultTransport}}
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
