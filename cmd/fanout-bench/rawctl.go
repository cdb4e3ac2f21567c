package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidwall/gjson"
)

// The raw client's control plane: what the scale scenarios need to create
// tens of thousands of queues, topics and subscriptions quickly (untimed).
// The SDK's control plane would take minutes for 100,000 queues.

// authHeaders returns the fixed SigV4 Authorization values (for SQS and
// SNS scopes) of an access key id; a 12-digit key selects that account
// (README, "Accounts and regions"). fanout without --credentials requires
// a signature on Query calls but does not check it.
func authHeaders(key string) (sqsAuth, snsAuth []string) {
	h := func(svc string) []string {
		return []string{"AWS4-HMAC-SHA256 Credential=" + key + "/20260101/us-east-1/" + svc + "/aws4_request, SignedHeaders=host;x-amz-date, " +
			"Signature=0000000000000000000000000000000000000000000000000000000000000000"}
	}
	return h("sqs"), h("sns")
}

// withKey returns a raw client sharing c's connections whose calls, JSON
// ones included, are signed with access key id key.
func (c *rawClient) withKey(key string) *rawClient {
	d := *c
	d.sqsAuth, d.snsAuth = authHeaders(key)
	return &d
}

// createQueue creates a standard queue and returns its URL.
func (c *rawClient) createQueue(ctx context.Context, name string) (string, error) {
	b := appendJSONString([]byte(`{"QueueName":`), name)
	data, err := c.sqsCall(ctx, "CreateQueue", append(b, '}'))
	if err != nil {
		return "", err
	}
	u := gjson.GetBytes(data, "QueueUrl").String()
	if u == "" {
		return "", fmt.Errorf("CreateQueue: no QueueUrl in %.200s", data)
	}
	return u, nil
}

// deleteQueue deletes a queue.
func (c *rawClient) deleteQueue(ctx context.Context, queueURL string) error {
	b := appendJSONString([]byte(`{"QueueUrl":`), queueURL)
	_, err := c.sqsCall(ctx, "DeleteQueue", append(b, '}'))
	return err
}

// createTopic creates a standard topic and returns its ARN.
func (c *rawClient) createTopic(ctx context.Context, name string) (string, error) {
	data, err := c.post(ctx, hdrForm, nil, []byte("Action=CreateTopic&Version=2010-03-31&Name="+url.QueryEscape(name)))
	if err != nil {
		return "", fmt.Errorf("sns CreateTopic: %w", err)
	}
	var r struct {
		Arn string `xml:"CreateTopicResult>TopicArn"`
	}
	if err := xml.Unmarshal(data, &r); err != nil || r.Arn == "" {
		return "", fmt.Errorf("sns CreateTopic: no TopicArn in %.200s", data)
	}
	return r.Arn, nil
}

// subscribeRaw subscribes an SQS queue to a topic with raw delivery.
func (c *rawClient) subscribeRaw(ctx context.Context, topicARN, queueARN string) error {
	form := "Action=Subscribe&Version=2010-03-31&Protocol=sqs&TopicArn=" + url.QueryEscape(topicARN) +
		"&Endpoint=" + url.QueryEscape(queueARN) +
		"&Attributes.entry.1.key=RawMessageDelivery&Attributes.entry.1.value=true"
	data, err := c.post(ctx, hdrForm, nil, []byte(form))
	if err != nil {
		return fmt.Errorf("sns Subscribe: %w", err)
	}
	if !strings.Contains(string(data), "<SubscriptionArn>arn:") {
		return fmt.Errorf("sns Subscribe: no SubscriptionArn in %.200s", data)
	}
	return nil
}

// queueArnOf derives a queue's ARN from its URL (…/<account>/<name>) in
// region, as fanout builds both.
func queueArnOf(queueURL, region string) (string, error) {
	u, err := url.Parse(queueURL)
	if err != nil {
		return "", err
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || len(parts[len(parts)-2]) != 12 {
		return "", fmt.Errorf("queue URL %q: want …/<account>/<name>", queueURL)
	}
	return "arn:aws:sqs:" + region + ":" + parts[len(parts)-2] + ":" + parts[len(parts)-1], nil
}

// parallel runs fn(i) for i in [0, n) from workers goroutines and returns
// the first error; it stops handing out work after one.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n)) // no more work
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
