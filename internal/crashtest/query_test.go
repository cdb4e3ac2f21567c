package crashtest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout/internal/sdktest"
)

// queryClient speaks SQS's Query protocol (signed form POSTs answered in
// XML), as AWS CLI 2.9 and older SDKs do: for one worker of each kind on
// the standard queue, and for every worker of qQFIFO.
type queryClient struct {
	hc       *http.Client
	endpoint string
}

// queryError is an error fanout answered over the Query protocol.
type queryError struct {
	status int
	code   string
}

func (e *queryError) Error() string { return strconv.Itoa(e.status) + " " + e.code }

// call posts form and decodes the reply into out. A reply that is not a
// whole XML document (the kill cut it off) is an error that is no answer.
func (c *queryClient) call(ctx context.Context, form url.Values, out any) error {
	form.Set("Version", "2012-11-05")
	body := []byte(form.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sdktest.Sign(req, body, "sqs")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code string }
		}
		if xml.Unmarshal(b, &e) != nil || e.Error.Code == "" {
			return fmt.Errorf("%s %s: %s, not an AWS error: %q", form.Get("Action"), resp.Status, resp.Header.Get("Content-Type"), b)
		}
		return &queryError{resp.StatusCode, e.Error.Code}
	}
	if err := xml.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: %w in %q", form.Get("Action"), err, b)
	}
	return nil
}

// send sends one message; group and dedup are a FIFO queue's ids (empty
// for a standard queue), and seq is the SequenceNumber a FIFO send gets.
func (c *queryClient) send(ctx context.Context, queueURL, body string, delay int32, group, dedup string) (id, seq string, err error) {
	var out struct {
		MessageID      string `xml:"SendMessageResult>MessageId"`
		SequenceNumber string `xml:"SendMessageResult>SequenceNumber"`
	}
	form := url.Values{"Action": {"SendMessage"}, "QueueUrl": {queueURL}, "MessageBody": {body}}
	if delay > 0 {
		form.Set("DelaySeconds", strconv.Itoa(int(delay)))
	}
	if group != "" {
		form.Set("MessageGroupId", group)
		form.Set("MessageDeduplicationId", dedup)
	}
	if err := c.call(ctx, form, &out); err != nil {
		return "", "", err
	}
	if out.MessageID == "" || (group != "") != (out.SequenceNumber != "") {
		return "", "", fmt.Errorf("SendMessage: MessageId %q, SequenceNumber %q in the reply of a send in group %q", out.MessageID, out.SequenceNumber, group)
	}
	return out.MessageID, out.SequenceNumber, nil
}

type queryFailed struct {
	ID   string `xml:"Id"`
	Code string `xml:"Code"`
}

func failedOf(fs []queryFailed) []batchFailed {
	out := make([]batchFailed, len(fs))
	for k, f := range fs {
		out[k].i, _ = strconv.Atoi(f.ID)
		out[k].code = f.Code
	}
	return out
}

func (c *queryClient) sendBatch(ctx context.Context, queueURL string, entries []types.SendMessageBatchRequestEntry) ([]batchOK, []batchFailed, error) {
	form := url.Values{"Action": {"SendMessageBatch"}, "QueueUrl": {queueURL}}
	for k, e := range entries {
		p := "SendMessageBatchRequestEntry." + strconv.Itoa(k+1) + "."
		form.Set(p+"Id", *e.Id)
		form.Set(p+"MessageBody", *e.MessageBody)
		if e.DelaySeconds > 0 {
			form.Set(p+"DelaySeconds", strconv.Itoa(int(e.DelaySeconds)))
		}
		if e.MessageGroupId != nil {
			form.Set(p+"MessageGroupId", *e.MessageGroupId)
			form.Set(p+"MessageDeduplicationId", *e.MessageDeduplicationId)
		}
	}
	var out struct {
		OK []struct {
			ID             string `xml:"Id"`
			MessageID      string `xml:"MessageId"`
			SequenceNumber string `xml:"SequenceNumber"`
		} `xml:"SendMessageBatchResult>SendMessageBatchResultEntry"`
		Failed []queryFailed `xml:"SendMessageBatchResult>BatchResultErrorEntry"`
	}
	if err := c.call(ctx, form, &out); err != nil {
		return nil, nil, err
	}
	ok := make([]batchOK, len(out.OK))
	for k, s := range out.OK {
		ok[k].i, _ = strconv.Atoi(s.ID)
		ok[k].id, ok[k].seq = s.MessageID, s.SequenceNumber
	}
	return ok, failedOf(out.Failed), nil
}

// receive receives up to 10 messages, waiting up to wait seconds; attempt
// is a FIFO receive's ReceiveRequestAttemptId (or empty).
func (c *queryClient) receive(ctx context.Context, queueURL string, vis time.Duration, wait int32, attempt string) ([]received, error) {
	form := url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {queueURL}, "MaxNumberOfMessages": {"10"},
		"WaitTimeSeconds": {strconv.Itoa(int(wait))}, "VisibilityTimeout": {strconv.Itoa(int(vis / time.Second))}, "AttributeName.1": {"All"}}
	if attempt != "" {
		form.Set("ReceiveRequestAttemptId", attempt)
	}
	var out struct {
		Messages []struct {
			MessageID     string `xml:"MessageId"`
			ReceiptHandle string
			Body          string
			Attributes    []struct{ Name, Value string } `xml:"Attribute"`
		} `xml:"ReceiveMessageResult>Message"`
	}
	if err := c.call(ctx, form, &out); err != nil {
		return nil, err
	}
	got := make([]received, len(out.Messages))
	for k, m := range out.Messages {
		got[k] = received{id: m.MessageID, body: m.Body, rh: m.ReceiptHandle}
		for _, a := range m.Attributes {
			switch a.Name {
			case "ApproximateReceiveCount":
				got[k].count, _ = strconv.Atoi(a.Value)
			case "SequenceNumber":
				got[k].seq = a.Value
			case "MessageGroupId":
				got[k].group = a.Value
			}
		}
		if got[k].count == 0 {
			return nil, fmt.Errorf("ReceiveMessage: %s without an ApproximateReceiveCount", m.MessageID)
		}
	}
	return got, nil
}

func (c *queryClient) delete(ctx context.Context, queueURL, handle string) error {
	var out struct {
		XMLName xml.Name `xml:"DeleteMessageResponse"`
	}
	return c.call(ctx, url.Values{"Action": {"DeleteMessage"}, "QueueUrl": {queueURL}, "ReceiptHandle": {handle}}, &out)
}

func (c *queryClient) changeVisibility(ctx context.Context, queueURL, handle string, vis time.Duration) error {
	var out struct {
		XMLName xml.Name `xml:"ChangeMessageVisibilityResponse"`
	}
	return c.call(ctx, url.Values{"Action": {"ChangeMessageVisibility"}, "QueueUrl": {queueURL}, "ReceiptHandle": {handle},
		"VisibilityTimeout": {strconv.Itoa(int(vis / time.Second))}}, &out)
}

// deleteBatch returns the indexes of the entries deleted and those refused.
func (c *queryClient) deleteBatch(ctx context.Context, queueURL string, entries []types.DeleteMessageBatchRequestEntry) ([]int, []batchFailed, error) {
	form := url.Values{"Action": {"DeleteMessageBatch"}, "QueueUrl": {queueURL}}
	for k, e := range entries {
		p := "DeleteMessageBatchRequestEntry." + strconv.Itoa(k+1) + "."
		form.Set(p+"Id", *e.Id)
		form.Set(p+"ReceiptHandle", *e.ReceiptHandle)
	}
	var out struct {
		OK     []string      `xml:"DeleteMessageBatchResult>DeleteMessageBatchResultEntry>Id"`
		Failed []queryFailed `xml:"DeleteMessageBatchResult>BatchResultErrorEntry"`
	}
	if err := c.call(ctx, form, &out); err != nil {
		return nil, nil, err
	}
	return indexes(out.OK), failedOf(out.Failed), nil
}

// indexes reads a batch reply's entry ids, which are the entries' indexes.
func indexes(ids []string) []int {
	ok := make([]int, len(ids))
	for k, id := range ids {
		ok[k], _ = strconv.Atoi(id)
	}
	return ok
}

// visChange is one entry of a ChangeMessageVisibilityBatch.
type visChange struct {
	handle string
	vis    time.Duration
}

// changeVisibilityBatch changes the visibility of each entry (Id its
// index) in one call; it returns the indexes of the entries changed and
// those refused.
func (c *queryClient) changeVisibilityBatch(ctx context.Context, queueURL string, entries []visChange) ([]int, []batchFailed, error) {
	form := url.Values{"Action": {"ChangeMessageVisibilityBatch"}, "QueueUrl": {queueURL}}
	for k, e := range entries {
		p := "ChangeMessageVisibilityBatchRequestEntry." + strconv.Itoa(k+1) + "."
		form.Set(p+"Id", strconv.Itoa(k))
		form.Set(p+"ReceiptHandle", e.handle)
		form.Set(p+"VisibilityTimeout", strconv.Itoa(int(e.vis/time.Second)))
	}
	var out struct {
		OK     []string      `xml:"ChangeMessageVisibilityBatchResult>ChangeMessageVisibilityBatchResultEntry>Id"`
		Failed []queryFailed `xml:"ChangeMessageVisibilityBatchResult>BatchResultErrorEntry"`
	}
	if err := c.call(ctx, form, &out); err != nil {
		return nil, nil, err
	}
	return indexes(out.OK), failedOf(out.Failed), nil
}
