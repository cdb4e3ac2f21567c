package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	sqsapi "github.com/fanout/fanout/sqs/api"
)

// hostile is one in-process fanout that raw requests are served by, without
// a network in between, so that tests can measure what a request costs.
type hostile struct {
	t   *testing.T
	h   http.Handler
	sqs *sqsapi.Handler // the same engine, without form parsing in front
}

func newHostile(t *testing.T) hostile {
	t.Helper()
	s, err := fanout.New(fanout.Options{AllowUnsigned: true}) // raw requests, unsigned
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return hostile{t, s.Handler(), sqsapi.New(s.SQS(), nil)}
}

// call sends a JSON 1.0 request with body and returns the recorded reply.
func (h hostile) call(action string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/", body)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	return rec
}

// jsonError decodes an AWS JSON 1.0 error reply.
func jsonError(t *testing.T, rec *httptest.ResponseRecorder) (typ, msg string) {
	t.Helper()
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("%d %q: %v", rec.Code, rec.Body, err)
	}
	return e.Type, e.Message
}

// allocated runs f and returns the bytes it allocated on the heap and how
// much its goroutines' stacks grew (a recursive parser shows there). The
// process's Sys is not used: the heap maps 64 MiB arenas, so it jumps by that
// whenever the collector happens to run late.
func allocated(f func()) (heap uint64, stack int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, int64(after.StackSys) - int64(before.StackSys)
}

// A million nested arrays used to cost gjson's recursive validator about
// 256 bytes of stack per level (256 MB for 1 MB; 6M levels overflowed the
// stack and killed the process); depth is now bounded in one flat pass
// before it runs.
func TestDeeplyNestedJSONIsCheap(t *testing.T) {
	h := newHostile(t)
	// With a 64 MiB stack limit, the recursive validator dies at a million levels.
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	for _, body := range [][]byte{
		bytes.Repeat([]byte("["), 1<<20),
		append([]byte(`{"QueueName":"q","x":`), bytes.Repeat([]byte(`{"a":`), 1<<18)...),
	} {
		var rec *httptest.ResponseRecorder
		heap, stack := allocated(func() { rec = h.call("ListQueues", bytes.NewReader(body)) })
		if typ, _ := jsonError(t, rec); rec.Code != 400 || typ != "com.amazonaws.sqs#SerializationException" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		t.Logf("%d-byte deep request: %d bytes allocated, the stacks grew %d bytes", len(body), heap, stack)
		if heap > 5*uint64(len(body)) || stack > 1<<20 {
			t.Fatalf("a %d-byte deep request allocated %d bytes and grew the stacks by %d", len(body), heap, stack)
		}
	}
	// Deep but within the bound is still parsed (and ignored, being unknown).
	body := `{"QueueName":"deep","Unknown":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`
	if rec := h.call("CreateQueue", strings.NewReader(body)); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// A body past the limit is refused as AWS's front end refuses it, and what
// Content-Length claims is never allocated up front.
func TestBodyLimit(t *testing.T) {
	h := newHostile(t)
	big := `{"QueueName":"` + strings.Repeat("a", 8<<20) + `"}`
	rec := h.call("CreateQueue", strings.NewReader(big))
	if rec.Code != 413 || rec.Body.String() != "HTTP content length exceeded 8388608 bytes." {
		t.Fatalf("%d %.200s", rec.Code, rec.Body)
	}
	// Claimed past the limit: refused before reading.
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
	req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	req.ContentLength = 9 << 20
	rec = httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("claimed 9 MiB: %d %s", rec.Code, rec.Body)
	}
	// Claimed 8 MiB, sent 2 bytes: costs what was sent, not what was claimed.
	heap, _ := allocated(func() {
		for range 20 {
			req := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
			req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
			req.ContentLength = 8 << 20
			rec := httptest.NewRecorder()
			h.h.ServeHTTP(rec, req)
		}
	})
	if heap > 4<<20 {
		t.Fatalf("20 requests claiming 8 MiB allocated %d bytes", heap)
	}
}

// JSON 1.0 members are read with their types, as AWS reads them: a null is
// an absent member, a value of another type is a SerializationException.
func TestStrictJSONMembers(t *testing.T) {
	h := newHostile(t)
	if rec := h.call("CreateQueue", strings.NewReader(`{"QueueName":"strict"}`)); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	q := `"QueueUrl":"http://localhost:4566/000000000000/strict"`
	for _, c := range []struct {
		action, body, typ, msg string
	}{
		{"CreateQueue", `{"QueueName":null}`, "MissingRequiredParameterException", ""},
		{"SendMessage", `{` + q + `,"MessageBody":null}`, "MissingRequiredParameterException", "The request must contain the parameter MessageBody."},
		{"SendMessage", `{` + q + `,"MessageBody":12}`, "SerializationException", "NUMBER_VALUE can not be converted to a String"},
		{"SendMessage", `{` + q + `,"MessageBody":true}`, "SerializationException", "TRUE_VALUE can not be converted to a String"},
		{"SendMessage", `{` + q + `,"MessageBody":{"a":1}}`, "SerializationException", "Start of structure or map found where not expected."},
		{"SendMessage", `{` + q + `,"MessageBody":["a"]}`, "SerializationException", "Start of list found where not expected"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","DelaySeconds":"5"}`, "SerializationException", "STRING_VALUE can not be converted to an Integer"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","DelaySeconds":false}`, "SerializationException", "FALSE_VALUE can not be converted to an Integer"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","DelaySeconds":1e12}`, "SerializationException", "NUMBER_VALUE can not be converted to an Integer"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","MessageAttributes":"a"}`, "SerializationException", "Expected map or null"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","MessageAttributes":{"a":"b"}}`, "SerializationException", "Expected null"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","MessageAttributes":{"a":{"DataType":1}}}`, "SerializationException", "NUMBER_VALUE can not be converted to a String"},
		{"SendMessage", `{` + q + `,"MessageBody":"x","MessageAttributes":{"a":{"DataType":"Binary","BinaryValue":[1]}}}`, "SerializationException", "Start of list found where not expected"},
		{"SendMessageBatch", `{` + q + `,"Entries":{"Id":"a"}}`, "SerializationException", "Start of structure or map found where not expected."},
		{"SendMessageBatch", `{` + q + `,"Entries":"a"}`, "SerializationException", "Expected list or null"},
		{"SendMessageBatch", `{` + q + `,"Entries":[{"Id":"a","MessageBody":7}]}`, "SerializationException", "NUMBER_VALUE can not be converted to a String"},
		{"SendMessageBatch", `{` + q + `,"Entries":[1]}`, "SerializationException", "Expected null"},
		{"ReceiveMessage", `{` + q + `,"AttributeNames":"All"}`, "SerializationException", "Expected list or null"},
		{"ReceiveMessage", `{` + q + `,"AttributeNames":[1]}`, "SerializationException", "NUMBER_VALUE can not be converted to a String"},
		{"TagQueue", `{` + q + `,"Tags":["a"]}`, "SerializationException", "Start of list found where not expected"},
		{"TagQueue", `{` + q + `,"Tags":{"a":1}}`, "SerializationException", "NUMBER_VALUE can not be converted to a String"},
		{"ListQueues", `[]`, "SerializationException", "Start of list found where not expected"},
		{"ListQueues", `"x"`, "SerializationException", "Expected null"},
		{"ListQueues", `17`, "SerializationException", "Expected null"},
	} {
		rec := h.call(c.action, strings.NewReader(c.body))
		typ, msg := jsonError(t, rec)
		if rec.Code != 400 || typ != "com.amazonaws.sqs#"+c.typ || (c.msg != "" && msg != c.msg) {
			t.Errorf("%s %s: %d %s", c.action, c.body, rec.Code, rec.Body)
		}
	}
	// No queue named "null" came to be, and null members of the right
	// places are simply absent.
	if rec := h.call("GetQueueUrl", strings.NewReader(`{"QueueName":"null"}`)); rec.Code != 400 {
		t.Fatalf("a queue named null exists: %s", rec.Body)
	}
	for _, body := range []string{
		`{` + q + `,"MessageBody":"x","DelaySeconds":null,"MessageAttributes":null,"MessageGroupId":null}`,
		`{` + q + `,"MessageBody":"x","MessageAttributes":{"a":{"DataType":"String","StringValue":"v","BinaryValue":null}}}`,
		`{` + q + `,"MessageBody":"x","Unknown":{"any":[1,true,null]}}`,
	} {
		if rec := h.call("SendMessage", strings.NewReader(body)); rec.Code != 200 {
			t.Errorf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
	rec := h.call("ReceiveMessage", strings.NewReader(`{`+q+`,"MaxNumberOfMessages":10,"MessageAttributeNames":["All",null]}`))
	if rec.Code != 200 || strings.Count(rec.Body.String(), `"Body":"x"`) != 3 || strings.Contains(rec.Body.String(), `"null"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// query sends a Query-protocol request with form and returns the reply.
func (h hostile) query(form url.Values) *httptest.ResponseRecorder {
	form.Set("Version", "2012-11-05")
	req := httptest.NewRequest("POST", "/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	return rec
}

// A custom DataType label that a reply could not carry (invalid UTF-8, a
// control character) is refused on both protocols, so it is never stored.
func TestCustomDataTypeLabels(t *testing.T) {
	h := newHostile(t)
	h.call("CreateQueue", strings.NewReader(`{"QueueName":"types"}`))
	qurl := "http://localhost:4566/000000000000/types"
	const want = "Message (user) attribute 't' type contains invalid characters."
	for _, dt := range []string{"String.\xff\x01", "Number.\x01", "Binary.a\xc3", "String.\uFFFE"} {
		// Raw bytes as a hostile client sends them; control characters escaped, as JSON requires.
		raw := strings.ReplaceAll(dt, "\x01", `\u0001`)
		body := []byte(`{"QueueUrl":"` + qurl + `","MessageBody":"x","MessageAttributes":{"t":{"DataType":"` + raw + `","StringValue":"1","BinaryValue":"AQ=="}}}`)
		rec := h.call("SendMessage", bytes.NewReader(body))
		if typ, msg := jsonError(t, rec); rec.Code != 400 || typ != "com.amazonaws.sqs#InvalidParameterValueException" || msg != want {
			t.Errorf("JSON %q: %d %s", dt, rec.Code, rec.Body)
		}
		rec = h.query(url.Values{"Action": {"SendMessage"}, "QueueUrl": {qurl}, "MessageBody": {"x"},
			"MessageAttribute.1.Name": {"t"}, "MessageAttribute.1.Value.DataType": {dt},
			"MessageAttribute.1.Value.StringValue": {"1"}, "MessageAttribute.1.Value.BinaryValue": {"AQ=="}})
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>InvalidParameterValue</Code><Message>"+strings.ReplaceAll(want, "'", "&apos;")+"</Message>") {
			t.Errorf("Query %q: %d %s", dt, rec.Code, rec.Body)
		}
	}
	long := "String." + strings.Repeat("x", 250)
	rec := h.query(url.Values{"Action": {"SendMessage"}, "QueueUrl": {qurl}, "MessageBody": {"x"},
		"MessageAttribute.1.Name": {"t"}, "MessageAttribute.1.Value.DataType": {long}, "MessageAttribute.1.Value.StringValue": {"1"}})
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "type must be shorter than 256 bytes") {
		t.Errorf("long type: %d %s", rec.Code, rec.Body)
	}
	// Labels of printable Unicode are kept and returned as sent.
	rec = h.query(url.Values{"Action": {"SendMessage"}, "QueueUrl": {qurl}, "MessageBody": {"x"},
		"MessageAttribute.1.Name": {"t"}, "MessageAttribute.1.Value.DataType": {"Number.prix-€ <&>"}, "MessageAttribute.1.Value.StringValue": {"1"}})
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	rec = h.call("ReceiveMessage", strings.NewReader(`{"QueueUrl":"`+qurl+`","MessageAttributeNames":["All"]}`))
	if !strings.Contains(rec.Body.String(), `"DataType":"Number.prix-€ <&>"`) {
		t.Fatalf("%s", rec.Body)
	}
}

// Batch limits are checked on the count alone, before any entry is decoded:
// a JSON batch of 50,000 entries or a Query batch of 9,990 costs a handful
// of allocations, not a few per entry.
func TestBatchLimitBeforeDecoding(t *testing.T) {
	h := newHostile(t)
	h.call("CreateQueue", strings.NewReader(`{"QueueName":"b"}`))
	qurl := "http://localhost:4566/000000000000/b"
	body := []byte(`{"QueueUrl":"` + qurl + `","Entries":[` + strings.TrimSuffix(strings.Repeat(`{"Id":"a","MessageBody":"x","ReceiptHandle":"r"},`, 50000), ",") + `]}`)
	form := url.Values{"Version": {"2012-11-05"}, "QueueUrl": {qurl}}
	for i := 1; i <= 3330; i++ {
		n := strconv.Itoa(i)
		form.Set("SendMessageBatchRequestEntry."+n+".Id", "e"+n)
		form.Set("SendMessageBatchRequestEntry."+n+".MessageBody", "x")
		form.Set("SendMessageBatchRequestEntry."+n+".ReceiptHandle", "r")
	}
	for _, action := range []string{"SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"} {
		var rec *httptest.ResponseRecorder
		allocs := testing.AllocsPerRun(2, func() { rec = h.call(action, bytes.NewReader(body)) })
		if typ, msg := jsonError(t, rec); typ != "com.amazonaws.sqs#TooManyEntriesInBatchRequest" || msg != "Maximum number of entries per request are 10. You have sent 50000." || allocs > 100 {
			t.Errorf("JSON %s: %d %s, %v allocations", action, rec.Code, rec.Body, allocs)
		}
		entry := map[string]string{"SendMessageBatch": "SendMessageBatchRequestEntry", "DeleteMessageBatch": "DeleteMessageBatchRequestEntry",
			"ChangeMessageVisibilityBatch": "ChangeMessageVisibilityBatchRequestEntry"}[action]
		qform := url.Values{"Action": {action}}
		for k, v := range form {
			qform[strings.Replace(k, "SendMessageBatchRequestEntry", entry, 1)] = v
		}
		allocs = testing.AllocsPerRun(2, func() {
			rec = httptest.NewRecorder()
			h.sqs.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), qform)
		})
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>AWS.SimpleQueueService.TooManyEntriesInBatchRequest</Code>") || allocs > 100 {
			t.Errorf("Query %s: %d %s, %v allocations", action, rec.Code, rec.Body, allocs)
		}
	}
}

// Access key ids are interned so that messages share them; a stream of
// distinct 100 KB "ids" used to be interned forever (2,000 requests: 202 MB).
// Only what could be an access key id is taken now, and the table is bounded.
func TestSenderIDsDoNotAccumulate(t *testing.T) {
	h := newHostile(t)
	h.call("CreateQueue", strings.NewReader(`{"QueueName":"senders"}`))
	send := func(akid string) {
		req := httptest.NewRequest("POST", "/", strings.NewReader(`{"QueueUrl":"http://localhost:4566/000000000000/senders","MessageBody":"x"}`))
		req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+akid+"/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00")
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	retained := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := retained()
	pad := strings.Repeat("A", 100<<10)
	for i := range 2000 {
		send(strconv.Itoa(i) + pad)
	}
	for i := range 2000 { // valid-looking and distinct: past the bound, copied per message
		send(fmt.Sprintf("AKIA%012d", i))
	}
	grown := int64(retained()) - int64(before)
	t.Logf("4,000 messages with distinct sender ids retain %d bytes", grown)
	if grown > 8<<20 {
		t.Fatalf("4,000 messages with distinct ids retain %d bytes", grown)
	}
	send("AKIAIOSFODNN7EXAMPLE")
	rec := h.call("ReceiveMessage", strings.NewReader(`{"QueueUrl":"http://localhost:4566/000000000000/senders","MaxNumberOfMessages":10,"AttributeNames":["SenderId"]}`))
	if !strings.Contains(rec.Body.String(), `"SenderId":"AIDAIT2UOQQY3AUEKVGXU"`) {
		t.Fatalf("a 100 KB id was not replaced by the anonymous one: %.500s", rec.Body)
	}
}

// Queue attributes given as JSON (RedrivePolicy, RedriveAllowPolicy, Policy)
// are parsed by encoding/json, whose scanner stops at 10,000 levels without
// recursing: megabytes of '[' are refused cheaply.
func TestDeepJSONQueueAttributesRefusedCheaply(t *testing.T) {
	h := newHostile(t)
	h.call("CreateQueue", strings.NewReader(`{"QueueName":"attrs"}`))
	deep := strings.Repeat("[", 4<<20)
	for _, name := range []string{"RedrivePolicy", "RedriveAllowPolicy", "Policy"} {
		body := `{"QueueUrl":"http://localhost:4566/000000000000/attrs","Attributes":{"` + name + `":"` + deep + `"}}`
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rec := h.call("SetQueueAttributes", strings.NewReader(body))
		runtime.ReadMemStats(&after)
		if typ, _ := jsonError(t, rec); rec.Code != 400 || !strings.HasPrefix(typ, "com.amazonaws.sqs#Invalid") {
			t.Errorf("%s: %d %.300s", name, rec.Code, rec.Body)
		}
		// A parser that recursed per level would need gigabytes of stack; one
		// that copied per level would allocate quadratically. Both are
		// measured directly, not through the heap's size, which depends on
		// when the collector happens to run (and on -race).
		stack := int64(after.StackSys) - int64(before.StackSys)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: stack grew %d bytes, %d bytes allocated for a %d-byte request", name, stack, alloc, len(body))
		if stack > 1<<20 {
			t.Errorf("%s: a 4 MiB deep value grew the stacks by %d bytes", name, stack)
		}
		if alloc > 32*uint64(len(body)) {
			t.Errorf("%s: a %d-byte request allocated %d bytes", name, len(body), alloc)
		}
	}
}
