package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// UserAgent is the User-Agent SNS sends to HTTP/S endpoints.
const UserAgent = "Amazon Simple Notification Service Agent"

// controlContentType is the Content-Type of confirmation messages; a
// request policy changes only that of notifications.
const controlContentType = "text/plain; charset=UTF-8"

// newHTTPClient makes the client for HTTP/S and Lambda endpoints: no
// redirects followed (SNS does not follow them), no proxy (endpoints are
// local), self-signed certificates only with InsecureEndpoints, and only
// connections egress allows.
func newHTTPClient(opts Options, g *egress) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second, Control: g.control}).DialContext,
		MaxIdleConns:        opts.Workers * 2,
		MaxIdleConnsPerHost: opts.Workers,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: opts.Timeout,
		// Responses are read and discarded; asking for gzip buys nothing.
		DisableCompression: true,
	}
	if opts.InsecureEndpoints {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure-endpoints
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// httpEndpoint POSTs to HTTP/S endpoints: the envelope (or raw text) with
// AWS's headers. A 2xx answer within the timeout is success; other 4xx
// answers but 429 are the endpoint's fault and are not retried; anything
// else (5xx, 429, 3xx, timeouts, refused connections, TLS errors) is retried.
// https://docs.aws.amazon.com/sns/latest/dg/sns-http-https-endpoint-as-subscriber.html
type httpEndpoint struct{}

func (httpEndpoint) remote(*Dispatcher) bool { return true }

func (httpEndpoint) attempt(d *Dispatcher, j *job) result {
	var (
		body, typ, id, contentType string
		raw                        bool
	)
	if j.msg != nil {
		payload, err := d.payload(j.msg, j.sub)
		if err != nil {
			return serverErr("%v", err)
		}
		body, typ, id, contentType, raw = payload, TypeNotification, j.msg.ID, j.policy.ContentType(), j.sub.Raw
	} else {
		env, err := d.controlEnvelope(j.ctl)
		if err != nil {
			return serverErr("%v", err)
		}
		body, typ, id, contentType = env, j.ctl.Type, j.ctl.ID, controlContentType
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	h.Set("User-Agent", UserAgent)
	h.Set("Accept-Encoding", "gzip,deflate")
	h.Set("x-amz-sns-message-type", typ)
	h.Set("x-amz-sns-message-id", id)
	h.Set("x-amz-sns-topic-arn", j.rec.TopicArn)
	if typ != TypeSubscriptionConfirmation {
		h.Set("x-amz-sns-subscription-arn", j.sub.Arn)
	}
	if raw {
		h.Set("x-amz-sns-rawdelivery", "true")
	}
	return d.post(j.sub.Endpoint, h, body, httpVerdict)
}

// post sends one request and lets verdict judge the answer.
func (d *Dispatcher) post(url string, h http.Header, body string, verdict func(*http.Response) result) result {
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return clientErr("invalid endpoint: %v", err)
	}
	req.Header = h
	resp, err := d.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return serverErr("no answer within %v", d.opts.Timeout)
		}
		if re := (*refusedError)(nil); errors.As(err, &re) {
			return clientErr("%v", re)
		}
		return serverErr("%v", unwrapURLError(err))
	}
	// Drain a little so the connection can be reused, then let it go.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	res := verdict(resp)
	res.status = resp.StatusCode
	return res
}

func httpVerdict(resp *http.Response) result {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return ok()
	case code == http.StatusTooManyRequests || code >= 500:
		return serverErr("HTTP %d", code)
	case code >= 400:
		return clientErr("HTTP %d", code)
	case code >= 300:
		return serverErr("HTTP %d (redirects are not followed)", code)
	}
	return serverErr("HTTP %d", code)
}

// unwrapURLError drops net/http's `Post "<url>": ` prefix: the record
// already names the endpoint.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
