package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

var snsActions = []string{
	"AddPermission", "ConfirmSubscription", "CreateTopic", "DeleteTopic", "GetSubscriptionAttributes",
	"GetTopicAttributes", "ListSubscriptions", "ListSubscriptionsByTopic", "ListTagsForResource",
	"ListTopics", "Publish", "PublishBatch", "RemovePermission", "SetSubscriptionAttributes",
	"SetTopicAttributes", "Subscribe", "TagResource", "Unsubscribe", "UntagResource",
}

// fuzzSNS is a fanout with a topic subscribed by a queue, replaced every few
// hundred runs so that what the inputs create cannot pile up.
func fuzzSNS(t testing.TB) (http.Handler, string) {
	s, err := fanout.New(fanout.Options{NoRecreateWait: true})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	call := func(form string) {
		req := httptest.NewRequest("POST", "/", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sdktest.Sign(req, []byte(form), "sns")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", form, rec.Code, rec.Body)
		}
	}
	call("Action=CreateQueue&Version=2012-11-05&QueueName=fq")
	call("Action=CreateTopic&Version=2010-03-31&Name=ft")
	topic := "arn:aws:sns:us-east-1:000000000000:ft"
	call("Action=Subscribe&Version=2010-03-31&Protocol=sqs&TopicArn=" + url.QueryEscape(topic) + "&Endpoint=" + url.QueryEscape("arn:aws:sqs:us-east-1:000000000000:fq"))
	return h, topic
}

// mentionsHTTP reports whether a form, raw or decoded, says "http" anywhere.
func mentionsHTTP(form string) bool {
	if strings.Contains(strings.ToLower(form), "http") {
		return true
	}
	vals, err := url.ParseQuery(form)
	if err != nil {
		return false // the server rejects a malformed form before acting on it
	}
	for k, vs := range vals {
		if strings.Contains(strings.ToLower(k), "http") {
			return true
		}
		for _, v := range vs {
			if strings.Contains(strings.ToLower(v), "http") {
				return true
			}
		}
	}
	return false
}

// FuzzSNSActions throws arbitrary forms at every SNS action: bad input must
// never answer 5xx.
func FuzzSNSActions(f *testing.F) {
	h, topic := fuzzSNS(f)
	te := url.QueryEscape(topic)
	for i, form := range []string{
		"TopicArn=" + te + "&Message=hi",
		"TopicArn=" + te + "&Message=%7B%22default%22%3A1%7D&MessageStructure=json",
		"TopicArn=" + te + "&Message=m&MessageAttributes.entry.1.Name=a&MessageAttributes.entry.1.Value.DataType=String.Array&MessageAttributes.entry.1.Value.StringValue=%5B1%2C",
		"TopicArn=" + te + "&PublishBatchRequestEntries.member.1.Id=x&PublishBatchRequestEntries.member.1.Message=m",
		"TopicArn=" + te + "&Protocol=sqs&Endpoint=arn%3Aaws%3Asqs%3Aus-east-1%3A000000000000%3Afq&Attributes.entry.1.key=FilterPolicy&Attributes.entry.1.value=%7B",
		"SubscriptionArn=" + te + "%3Aabc&AttributeName=DeliveryPolicy&AttributeValue=%7B%22healthyRetryPolicy%22%3A%7B%7D%7D",
		"Name=x.fifo&Attributes.entry.1.key=FifoTopic&Attributes.entry.1.value=true&Attributes.entry.2.key=ArchivePolicy&Attributes.entry.2.value=%7B",
		"ResourceArn=" + te + "&Tags.member.99999999999999999999.Key=k",
	} {
		f.Add(uint8(i), form)
	}
	// The big cases: deep nesting, huge attribute and entry sets, long ids.
	var attrs, entries strings.Builder
	for i := 1; i <= 2000; i++ {
		n := strconv.Itoa(i)
		attrs.WriteString("&MessageAttributes.entry." + n + ".Name=a" + n + "&MessageAttributes.entry." + n + ".Value.DataType=String&MessageAttributes.entry." + n + ".Value.StringValue=v")
	}
	for i := 1; i <= 9000; i++ {
		entries.WriteString("&PublishBatchRequestEntries.member." + strconv.Itoa(i) + ".Id=e" + strconv.Itoa(i))
	}
	for i, form := range []string{
		"TopicArn=" + te + "&Message=m" + attrs.String(),
		"TopicArn=" + te + entries.String(),
		"TopicArn=" + te + strings.Repeat("t", 100<<10) + "&Message=m",
		"TopicArn=" + te + "&Message=" + strings.Repeat("%5B", 50000) + "&MessageStructure=json",
		"TopicArn=" + te + "&Protocol=sqs&Endpoint=arn%3Aaws%3Asqs%3Aus-east-1%3A000000000000%3Afq&Attributes.entry.1.key=FilterPolicy&Attributes.entry.1.value=" + strings.Repeat("%7B%22a%22%3A", 20000),
		"TopicArn=" + te + "&Message=m&MessageAttributes.entry.1.Name=t&MessageAttributes.entry.1.Value.DataType=String.%FF%01&MessageAttributes.entry.1.Value.StringValue=v",
		"Name=deep&Attributes.entry.1.key=Policy&Attributes.entry.1.value=" + strings.Repeat("%5B", 50000),
	} {
		f.Add(uint8(i), form)
	}
	runs := 0
	f.Fuzz(func(t *testing.T, action uint8, form string) {
		if runs++; runs%300 == 0 {
			h, _ = fuzzSNS(t)
		}
		if mentionsHTTP(form) {
			// An http or https subscription would make fanout call whatever
			// address the mutation produced: this fuzzer stays off the network.
			return
		}
		name := snsActions[int(action)%len(snsActions)]
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		body := "Action=" + name + "&Version=2010-03-31&" + form
		req := httptest.NewRequest("POST", "/", strings.NewReader(body)).WithContext(ctx)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sdktest.Sign(req, []byte(body), "sns")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", name, form, rec.Code, rec.Body)
		}
	})
}
