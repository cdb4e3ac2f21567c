package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

// actionNames lists every SQS action, in a fixed order for the fuzzers.
var actionNames = func() []string {
	names := []string{
		"CreateQueue", "DeleteQueue", "GetQueueUrl", "ListQueues", "GetQueueAttributes", "SetQueueAttributes",
		"PurgeQueue", "TagQueue", "UntagQueue", "ListQueueTags", "AddPermission", "RemovePermission",
		"ListDeadLetterSourceQueues", "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage",
		"DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch",
		"StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask",
	}
	sort.Strings(names)
	return names
}()

// fuzzServer is one fanout with a queue, shared by a few hundred of a
// fuzzer's runs (then replaced, so what the inputs create cannot pile up):
// bad input must never answer 5xx.
func fuzzServer(t testing.TB) (http.Handler, string) {
	s, err := fanout.New(fanout.Options{NoPurgeWait: true, NoRecreateWait: true})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"QueueName":"fuzz"}`))
	req.Header.Set("X-Amz-Target", "AmazonSQS.CreateQueue")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	return h, "http://example.com/000000000000/fuzz"
}

// shortContext ends a long poll the input may ask for (a client going away),
// so that a run takes milliseconds.
func shortContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func FuzzJSONActions(f *testing.F) {
	h, q := fuzzServer(f)
	for i, body := range []string{
		`{}`, `{"QueueUrl":"` + q + `","MessageBody":"x"}`, `{"QueueUrl":"` + q + `","Entries":[{"Id":"a","MessageBody":"b"}]}`,
		`{"QueueUrl":"` + q + `","MaxNumberOfMessages":"ten","WaitTimeSeconds":-1}`, `{"QueueUrl":` + "\x00" + `}`,
		`{"QueueUrl":"` + q + `","ReceiptHandle":"AAAA","VisibilityTimeout":1e99}`, `[1,2,3]`, `{"Attributes":{"RedrivePolicy":"{"}}`,
		`{"QueueUrl":"` + q + `","MessageAttributes":{"a":{"DataType":"Binary","BinaryValue":"%%%"}}}`,
	} {
		f.Add(uint8(i), body)
	}
	// The big cases: deep nesting, huge member sets, long ids.
	for i, body := range bigJSONSeeds(q) {
		f.Add(uint8(i), body)
	}
	runs := 0
	f.Fuzz(func(t *testing.T, action uint8, body string) {
		if runs++; runs%500 == 0 {
			h, q = fuzzServer(t)
		}
		name := actionNames[int(action)%len(actionNames)]
		if name == "DeleteQueue" || name == "PurgeQueue" {
			return // they would legitimately empty the queue the fuzzer watches
		}
		req := httptest.NewRequest("POST", "/", strings.NewReader(body)).WithContext(shortContext(t))
		req.Header.Set("X-Amz-Target", "AmazonSQS."+name)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", name, body, rec.Code, rec.Body)
		}
	})
}

func FuzzQueryActions(f *testing.F) {
	h, q := fuzzServer(f)
	for i, form := range []string{
		"QueueUrl=" + url.QueryEscape(q) + "&MessageBody=x",
		"QueueUrl=" + url.QueryEscape(q) + "&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=b",
		"QueueUrl=" + url.QueryEscape(q) + "&MaxNumberOfMessages=99999999999999999999",
		"QueueName=fuzz&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=-5",
		"QueueUrl=" + url.QueryEscape(q) + "&MessageAttribute.1.Name=n&MessageAttribute.1.Value.DataType=Number&MessageAttribute.1.Value.StringValue=1e999",
		"Tag.99999999999999999999.Key=k",
	} {
		f.Add(uint8(i), form)
	}
	for i, form := range bigQuerySeeds(q) {
		f.Add(uint8(i), form)
	}
	runs := 0
	f.Fuzz(func(t *testing.T, action uint8, form string) {
		if runs++; runs%500 == 0 {
			h, _ = fuzzServer(t)
		}
		name := actionNames[int(action)%len(actionNames)]
		if name == "DeleteQueue" || name == "PurgeQueue" {
			return
		}
		body := "Action=" + name + "&Version=2012-11-05&" + form
		req := httptest.NewRequest("POST", "/", strings.NewReader(body)).WithContext(shortContext(t))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sdktest.Sign(req, []byte(body), "sqs")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", name, form, rec.Code, rec.Body)
		}
	})
}

// bigJSONSeeds are JSON bodies past what mutation of small seeds reaches:
// nesting far beyond the bound, thousands of members, 100 KB ids.
func bigJSONSeeds(q string) []string {
	long := strings.Repeat("i", 100<<10)
	many := func(n int, item func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = item(i)
		}
		return strings.Join(parts, ",")
	}
	return []string{
		strings.Repeat("[", 100000),
		`{"QueueUrl":"` + q + `","MessageBody":"x","X":` + strings.Repeat(`{"a":`, 2000) + `1` + strings.Repeat("}", 2000) + `}`,
		`{"QueueUrl":"` + q + `","MessageBody":"x","MessageAttributes":{` + many(2000, func(i int) string {
			return `"a` + strconv.Itoa(i) + `":{"DataType":"String.` + strconv.Itoa(i) + `","StringValue":"v"}`
		}) + `}}`,
		`{"QueueUrl":"` + q + `","Entries":[` + many(5000, func(i int) string {
			return `{"Id":"e` + strconv.Itoa(i) + `","MessageBody":"b","ReceiptHandle":"r","VisibilityTimeout":1}`
		}) + `]}`,
		`{"QueueName":"big","Attributes":{` + many(1000, func(i int) string { return `"A` + strconv.Itoa(i) + `":"1"` }) + `},"tags":{"k":"` + long + `"}}`,
		`{"QueueUrl":"` + q + long + `","Entries":[{"Id":"` + long + `","MessageBody":"b"}],"ReceiptHandle":"` + long + `"}`,
		`{"QueueName":"deep","Attributes":{"RedrivePolicy":"` + strings.Repeat("[", 50000) + `","Policy":"` + strings.Repeat(`{\"a\":`, 20000) + `"}}`,
		`{"QueueUrl":"` + q + `","MessageBody":"x","MessageAttributes":{"t":{"DataType":"String.\xff\u0001","StringValue":"v"}}}`,
	}
}

// bigQuerySeeds are the Query-protocol counterparts of bigJSONSeeds.
func bigQuerySeeds(q string) []string {
	var attrs, entries strings.Builder
	for i := 1; i <= 2000; i++ {
		n := strconv.Itoa(i)
		attrs.WriteString("&MessageAttribute." + n + ".Name=a" + n + "&MessageAttribute." + n + ".Value.DataType=String&MessageAttribute." + n + ".Value.StringValue=v")
	}
	for i := 1; i <= 3000; i++ {
		n := strconv.Itoa(i)
		entries.WriteString("&SendMessageBatchRequestEntry." + n + ".Id=e" + n + "&SendMessageBatchRequestEntry." + n + ".MessageBody=b")
	}
	qe := url.QueryEscape(q)
	return []string{
		"QueueUrl=" + qe + "&MessageBody=x" + attrs.String(),
		"QueueUrl=" + qe + entries.String(),
		"QueueName=" + strings.Repeat("n", 100<<10),
		"QueueName=deep&Attribute.1.Name=RedrivePolicy&Attribute.1.Value=" + strings.Repeat("%5B", 50000),
		"QueueUrl=" + qe + "&MessageBody=x&MessageAttribute.1.Name=t&MessageAttribute.1.Value.DataType=String.%FF%01&MessageAttribute.1.Value.StringValue=v",
	}
}
