package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Client kinds accepted by --client.
const (
	kindSDK  = "sdk"
	kindHTTP = "http"
)

// entry is one message to send; groupID and dedupID are set only for FIFO
// queues.
type entry struct {
	body, groupID, dedupID string
}

// message is the part of a received message the scenarios use.
type message struct {
	body, receiptHandle string
}

// dataPlane is the timed API surface. Both client kinds implement it so that
// every scenario runs unchanged against either.
type dataPlane interface {
	sendMessage(ctx context.Context, queueURL string, e entry) error
	sendMessageBatch(ctx context.Context, queueURL string, es []entry) error
	receiveMessage(ctx context.Context, queueURL string, max, waitSeconds int) ([]message, error)
	deleteMessageBatch(ctx context.Context, queueURL string, handles []string) error
	// publish sends msg with attrs (nil for none).
	publish(ctx context.Context, topicARN, msg string, attrs *pubAttrs) error
}

// newHTTPClient returns the one http.Client a client kind shares between all
// its workers. It keeps enough idle connections that workers never redial,
// and refuses to dial anything but loopback so the tool can only load this
// machine.
func newHTTPClient(conns int) *http.Client {
	dialer := &net.Dialer{
		Timeout: 5 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing non-loopback address %s", address)
			}
			return nil
		},
	}
	return &http.Client{
		// Bounds every call, including long polls (at most a few seconds).
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConns:        2*conns + 16,
			MaxIdleConnsPerHost: 2*conns + 16,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// newSDKHTTPClient is newHTTPClient for the SDK clients, with a work-around
// for a client-side race: smithy-go closes the request body as soon as the
// response arrives, and its closed body's WriteTo then returns io.EOF, which
// net/http's writeLoop (still finishing the request on a fast loopback
// server) takes as a write error and closes the connection while the
// response is being read ("deserialization failed ... use of closed network
// connection", aws/aws-sdk-go-v2#1825 and #2737). The SDK's default retryer
// hides it; with retries off it would count as a server error.
func newSDKHTTPClient(conns int) *http.Client {
	hc := newHTTPClient(conns)
	hc.Transport = hideWriterTo{hc.Transport}
	return hc
}

// hideWriterTo passes requests on with a body that has only Read and Close,
// so net/http reads it instead of calling the SDK body's WriteTo.
type hideWriterTo struct{ next http.RoundTripper }

// CloseIdleConnections passes http.Client.CloseIdleConnections on, which
// otherwise stops at a transport without the method.
func (t hideWriterTo) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t hideWriterTo) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return t.next.RoundTrip(req)
	}
	r := *req // RoundTrip must not modify the caller's request
	r.Body = struct{ io.ReadCloser }{req.Body}
	return t.next.RoundTrip(&r)
}

// sdkClient wraps the aws-sdk-go-v2 SQS and SNS clients configured the way a
// user would point them at an emulator. It also provides the untimed control
// plane (queues, topics, subscriptions) for every scenario.
type sdkClient struct {
	sqs *sqs.Client
	sns *sns.Client
}

func newSDKClient(endpoint string, hc *http.Client) *sdkClient {
	return newSDKClientKey(endpoint, hc, "fanout")
}

// newSDKClientKey is newSDKClient with access key id key (a 12-digit key
// selects that account).
func newSDKClientKey(endpoint string, hc *http.Client, key string) *sdkClient {
	creds := credentials.NewStaticCredentialsProvider(key, "fanout", "")
	return &sdkClient{
		sqs: sqs.New(sqs.Options{
			Region:       "us-east-1",
			Credentials:  creds,
			BaseEndpoint: aws.String(endpoint),
			HTTPClient:   hc,
			Retryer:      aws.NopRetryer{}, // a retry would hide errors and skew latency
		}),
		sns: sns.New(sns.Options{
			Region:       "us-east-1",
			Credentials:  creds,
			BaseEndpoint: aws.String(endpoint),
			HTTPClient:   hc,
			Retryer:      aws.NopRetryer{},
		}),
	}
}

func (c *sdkClient) sendMessage(ctx context.Context, queueURL string, e entry) error {
	in := &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: &e.body}
	if e.groupID != "" {
		in.MessageGroupId = &e.groupID
		in.MessageDeduplicationId = &e.dedupID
	}
	_, err := c.sqs.SendMessage(ctx, in)
	return err
}

// batchIDs are the entry ids used in every batch call.
var batchIDs = [10]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

func (c *sdkClient) sendMessageBatch(ctx context.Context, queueURL string, es []entry) error {
	in := &sqs.SendMessageBatchInput{QueueUrl: &queueURL, Entries: make([]sqstypes.SendMessageBatchRequestEntry, len(es))}
	for i := range es {
		e := &in.Entries[i]
		e.Id = &batchIDs[i]
		e.MessageBody = &es[i].body
		if es[i].groupID != "" {
			e.MessageGroupId = &es[i].groupID
			e.MessageDeduplicationId = &es[i].dedupID
		}
	}
	out, err := c.sqs.SendMessageBatch(ctx, in)
	if err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("SendMessageBatch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Code))
	}
	return nil
}

func (c *sdkClient) receiveMessage(ctx context.Context, queueURL string, max, waitSeconds int) ([]message, error) {
	out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            &queueURL,
		MaxNumberOfMessages: int32(max),
		WaitTimeSeconds:     int32(waitSeconds),
	})
	if err != nil {
		return nil, err
	}
	msgs := make([]message, len(out.Messages))
	for i, m := range out.Messages {
		msgs[i] = message{body: aws.ToString(m.Body), receiptHandle: aws.ToString(m.ReceiptHandle)}
	}
	return msgs, nil
}

func (c *sdkClient) deleteMessageBatch(ctx context.Context, queueURL string, handles []string) error {
	in := &sqs.DeleteMessageBatchInput{QueueUrl: &queueURL, Entries: make([]sqstypes.DeleteMessageBatchRequestEntry, len(handles))}
	for i := range handles {
		in.Entries[i] = sqstypes.DeleteMessageBatchRequestEntry{Id: &batchIDs[i], ReceiptHandle: &handles[i]}
	}
	out, err := c.sqs.DeleteMessageBatch(ctx, in)
	if err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("DeleteMessageBatch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Code))
	}
	return nil
}

func (c *sdkClient) publish(ctx context.Context, topicARN, msg string, attrs *pubAttrs) error {
	in := &sns.PublishInput{TopicArn: &topicARN, Message: &msg}
	if attrs != nil {
		in.MessageAttributes = attrs.sdk
	}
	_, err := c.sns.Publish(ctx, in)
	return err
}

// createQueue creates a queue and returns its URL and ARN.
func (c *sdkClient) createQueue(ctx context.Context, name string, fifo bool) (queueURL, arn string, err error) {
	in := &sqs.CreateQueueInput{QueueName: &name}
	if fifo {
		in.Attributes = map[string]string{"FifoQueue": "true"}
	}
	out, err := c.sqs.CreateQueue(ctx, in)
	if err != nil {
		return "", "", fmt.Errorf("CreateQueue %s: %w", name, err)
	}
	queueURL = aws.ToString(out.QueueUrl)
	attrs, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       &queueURL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("GetQueueAttributes %s: %w", name, err)
	}
	return queueURL, attrs.Attributes["QueueArn"], nil
}

func (c *sdkClient) deleteQueue(ctx context.Context, queueURL string) error {
	_, err := c.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &queueURL})
	return err
}

func (c *sdkClient) createTopic(ctx context.Context, name string) (string, error) {
	out, err := c.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: &name})
	if err != nil {
		return "", fmt.Errorf("CreateTopic %s: %w", name, err)
	}
	return aws.ToString(out.TopicArn), nil
}

// subscribeQueue subscribes an SQS queue with raw delivery, so the queue
// receives the published text itself rather than a JSON envelope.
func (c *sdkClient) subscribeQueue(ctx context.Context, topicARN, queueARN string) error {
	return c.subscribe(ctx, topicARN, "sqs", queueARN, map[string]string{"RawMessageDelivery": "true"})
}

// subscribe subscribes endpoint with the given subscription attributes.
func (c *sdkClient) subscribe(ctx context.Context, topicARN, protocol, endpoint string, attrs map[string]string) error {
	_, err := c.sns.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn:   &topicARN,
		Protocol:   &protocol,
		Endpoint:   &endpoint,
		Attributes: attrs,
	})
	if err != nil {
		return fmt.Errorf("sns Subscribe %s: %w", endpoint, err)
	}
	return nil
}

// queueDepth returns a queue's ApproximateNumberOfMessages.
func (c *sdkClient) queueDepth(ctx context.Context, queueURL string) (int, error) {
	out, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       &queueURL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		return 0, fmt.Errorf("GetQueueAttributes: %w", err)
	}
	return strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
}

func (c *sdkClient) deleteTopic(ctx context.Context, topicARN string) error {
	_, err := c.sns.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: &topicARN})
	return err
}

// rawClient speaks the wire protocols directly with net/http: request bodies
// are assembled by byte appends from pre-escaped parts, with no reflection and
// no signing per request, so its figures show what the server itself costs.
// Query calls carry one fixed SigV4 Authorization header, which fanout
// (without --credentials) requires but does not check.
type rawClient struct {
	hc       *http.Client
	endpoint string
	// sqsAuth and snsAuth, when set (withKey), sign every call, JSON ones
	// included, with one access key id; else Query calls carry hdrAuth.
	sqsAuth, snsAuth []string
}

// Header values are pre-built slices so each request avoids re-canonicalising.
var (
	hdrJSON = []string{"application/x-amz-json-1.0"}
	hdrForm = []string{"application/x-www-form-urlencoded; charset=utf-8"}
	hdrAuth = []string{"AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sns/aws4_request, SignedHeaders=host;x-amz-date, " +
		"Signature=0000000000000000000000000000000000000000000000000000000000000000"}
	hdrDate = []string{"20260101T000000Z"}
	targets = map[string][]string{}
)

func init() {
	for _, a := range []string{"SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessageBatch", "CreateQueue", "DeleteQueue"} {
		targets[a] = []string{"AmazonSQS." + a}
	}
}

// post sends one request and returns the response body; any status other
// than 200 is an error carrying the start of the body.
func (c *rawClient) post(ctx context.Context, contentType, target []string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header["Content-Type"] = contentType
	if target != nil {
		req.Header["X-Amz-Target"] = target
		if c.sqsAuth != nil {
			req.Header["Authorization"] = c.sqsAuth
			req.Header["X-Amz-Date"] = hdrDate
		}
	} else {
		req.Header["Authorization"] = hdrAuth
		if c.snsAuth != nil {
			req.Header["Authorization"] = c.snsAuth
		}
		req.Header["X-Amz-Date"] = hdrDate
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		if len(data) > 200 {
			data = data[:200]
		}
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, data)
	}
	return data, nil
}

func (c *rawClient) sqsCall(ctx context.Context, action string, body []byte) ([]byte, error) {
	data, err := c.post(ctx, hdrJSON, targets[action], body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", action, err)
	}
	return data, nil
}

// appendEntryFields appends the message fields of e (no braces).
func appendEntryFields(b []byte, e *entry) []byte {
	b = append(b, `"MessageBody":`...)
	b = appendJSONString(b, e.body)
	if e.groupID != "" {
		b = append(b, `,"MessageGroupId":`...)
		b = appendJSONString(b, e.groupID)
		b = append(b, `,"MessageDeduplicationId":`...)
		b = appendJSONString(b, e.dedupID)
	}
	return b
}

func (c *rawClient) sendMessage(ctx context.Context, queueURL string, e entry) error {
	b := make([]byte, 0, len(queueURL)+len(e.body)+128)
	b = append(b, `{"QueueUrl":`...)
	b = appendJSONString(b, queueURL)
	b = append(b, ',')
	b = appendEntryFields(b, &e)
	b = append(b, '}')
	_, err := c.sqsCall(ctx, "SendMessage", b)
	return err
}

// batchResult is the part of a batch response the raw client checks.
type batchResult struct {
	Failed []struct{ Id, Code string }
}

func checkBatch(action string, data []byte) error {
	var r batchResult
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: bad response: %w", action, err)
	}
	if len(r.Failed) > 0 {
		return fmt.Errorf("%s: %d entries failed: %s", action, len(r.Failed), r.Failed[0].Code)
	}
	return nil
}

func (c *rawClient) sendMessageBatch(ctx context.Context, queueURL string, es []entry) error {
	size := len(queueURL) + 64
	for i := range es {
		size += len(es[i].body) + 128
	}
	b := make([]byte, 0, size)
	b = append(b, `{"QueueUrl":`...)
	b = appendJSONString(b, queueURL)
	b = append(b, `,"Entries":[`...)
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Id":"`...)
		b = append(b, batchIDs[i]...)
		b = append(b, `",`...)
		b = appendEntryFields(b, &es[i])
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	data, err := c.sqsCall(ctx, "SendMessageBatch", b)
	if err != nil {
		return err
	}
	return checkBatch("SendMessageBatch", data)
}

func (c *rawClient) receiveMessage(ctx context.Context, queueURL string, max, waitSeconds int) ([]message, error) {
	b := make([]byte, 0, len(queueURL)+96)
	b = append(b, `{"QueueUrl":`...)
	b = appendJSONString(b, queueURL)
	b = append(b, `,"MaxNumberOfMessages":`...)
	b = strconv.AppendInt(b, int64(max), 10)
	b = append(b, `,"WaitTimeSeconds":`...)
	b = strconv.AppendInt(b, int64(waitSeconds), 10)
	b = append(b, '}')
	data, err := c.sqsCall(ctx, "ReceiveMessage", b)
	if err != nil {
		return nil, err
	}
	// The null server's scanner rather than encoding/json: this client is
	// meant to cost as little as possible.
	var msgs []message
	var body, handle []byte
	bad := false
	err = scanJSON(data, func(depth int, key, raw []byte) {
		if depth == 2 {
			switch string(key) {
			case "Body":
				body = raw
			case "ReceiptHandle":
				handle = raw
			}
		}
	}, func(depth int) {
		if depth == 2 && handle != nil {
			b, ok1 := jsonString(body)
			h, ok2 := jsonString(handle)
			bad = bad || !ok1 || !ok2
			msgs = append(msgs, message{body: b, receiptHandle: h})
		}
		body, handle = nil, nil
	})
	if err != nil || bad {
		return nil, fmt.Errorf("ReceiveMessage: bad response: %.200s", data)
	}
	return msgs, nil
}

func (c *rawClient) deleteMessageBatch(ctx context.Context, queueURL string, handles []string) error {
	size := len(queueURL) + 64
	for _, h := range handles {
		size += len(h) + 40
	}
	b := make([]byte, 0, size)
	b = append(b, `{"QueueUrl":`...)
	b = appendJSONString(b, queueURL)
	b = append(b, `,"Entries":[`...)
	for i, h := range handles {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Id":"`...)
		b = append(b, batchIDs[i]...)
		b = append(b, `","ReceiptHandle":`...)
		b = appendJSONString(b, h)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	data, err := c.sqsCall(ctx, "DeleteMessageBatch", b)
	if err != nil {
		return err
	}
	return checkBatch("DeleteMessageBatch", data)
}

func (c *rawClient) publish(ctx context.Context, topicARN, msg string, attrs *pubAttrs) error {
	form := ""
	if attrs != nil {
		form = attrs.form
	}
	b := make([]byte, 0, len(topicARN)+len(msg)+len(form)+96)
	b = append(b, "Action=Publish&Version=2010-03-31&TopicArn="...)
	b = append(b, url.QueryEscape(topicARN)...)
	b = append(b, "&Message="...)
	b = append(b, url.QueryEscape(msg)...)
	b = append(b, form...)
	data, err := c.post(ctx, hdrForm, nil, b)
	if err != nil {
		return fmt.Errorf("sns Publish: %w", err)
	}
	var r struct {
		MessageID string `xml:"PublishResult>MessageId"`
	}
	if err := xml.Unmarshal(data, &r); err != nil || r.MessageID == "" {
		return errors.New("sns Publish: response without MessageId")
	}
	return nil
}

// msgAttr is one String or Number message attribute.
type msgAttr struct{ name, dataType, value string }

// pubAttrs is a fixed set of message attributes in both clients' forms,
// built once so that a publish with attributes costs the client no more
// than one without.
type pubAttrs struct {
	sdk  map[string]snstypes.MessageAttributeValue
	form string // "&MessageAttributes.entry.1.Name=..." etc., escaped
}

func newPubAttrs(as []msgAttr) *pubAttrs {
	p := &pubAttrs{sdk: make(map[string]snstypes.MessageAttributeValue, len(as))}
	var b []byte
	for i, a := range as {
		p.sdk[a.name] = snstypes.MessageAttributeValue{DataType: aws.String(a.dataType), StringValue: aws.String(a.value)}
		pre := "&MessageAttributes.entry." + strconv.Itoa(i+1)
		b = append(b, pre+".Name="+url.QueryEscape(a.name)...)
		b = append(b, pre+".Value.DataType="+url.QueryEscape(a.dataType)...)
		b = append(b, pre+".Value.StringValue="+url.QueryEscape(a.value)...)
	}
	p.form = string(b)
	return p
}

// appendJSONString appends s as a JSON string literal. It escapes what JSON
// requires and nothing else, and replaces invalid UTF-8 like encoding/json.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
