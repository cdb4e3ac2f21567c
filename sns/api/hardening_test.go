package api_test

import (
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout/fanout/sns"
	snsapi "github.com/fanout/fanout/sns/api"
)

// direct is an SNS handler without HTTP or form parsing around it, so that
// what an action costs can be counted on its own.
func direct(t testing.TB) *snsapi.Handler {
	e := sns.New(sns.Options{})
	h := snsapi.New(e, nil)
	rec := httptest.NewRecorder()
	h.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), url.Values{"Action": {"CreateTopic"}, "Name": {"t"}})
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	return h
}

// manyEntries is a PublishBatch of n entries, each with an Id (the most a
// form of 10,000 parameters holds).
func manyEntries(n int) url.Values {
	v := url.Values{"Action": {"PublishBatch"}, "TopicArn": {"arn:aws:sns:us-east-1:000000000000:t"}}
	for i := 1; i <= n; i++ {
		v.Set("PublishBatchRequestEntries.member."+strconv.Itoa(i)+".Id", "e"+strconv.Itoa(i))
	}
	return v
}

// The 10-entry limit is checked on the count alone: 9,990 entries are
// refused without decoding any (decoding each scanned the whole form, so the
// work grew with the square of the entries: 3.6 s of CPU).
func TestPublishBatchLimitBeforeDecoding(t *testing.T) {
	h := direct(t)
	params := manyEntries(9990)
	var rec *httptest.ResponseRecorder
	allocs := testing.AllocsPerRun(3, func() {
		rec = httptest.NewRecorder()
		h.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), params)
	})
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>TooManyEntriesInBatchRequest</Code><Message>The batch request contains more entries than permissible.</Message>") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if allocs > 500 {
		t.Fatalf("refusing 9,990 entries took %v allocations", allocs)
	}
}

// BenchmarkPublishBatchTooMany is the CPU a refused PublishBatch of 9,990
// entries costs.
func BenchmarkPublishBatchTooMany(b *testing.B) {
	h := direct(b)
	params := manyEntries(9990)
	for b.Loop() {
		h.ServeQuery(httptest.NewRecorder(), httptest.NewRequest("POST", "/", nil), params)
	}
}

// A custom DataType label a reply or a raw delivery could not carry is
// refused by Publish and PublishBatch alike, so it is never forwarded.
func TestCustomDataTypeLabelsRefused(t *testing.T) {
	h := direct(t)
	topic := "arn:aws:sns:us-east-1:000000000000:t"
	const want = "<Code>ParameterValueInvalid</Code><Message>The message attribute &apos;t&apos; has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.</Message>"
	for _, dt := range []string{"String.\xff\x01", "Number.\x01", "String.a\xc3", "String." + strings.Repeat("x", 250)} {
		for _, v := range []url.Values{
			{"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"m"},
				"MessageAttributes.entry.1.Name": {"t"}, "MessageAttributes.entry.1.Value.DataType": {dt},
				"MessageAttributes.entry.1.Value.StringValue": {"1"}},
			{"Action": {"PublishBatch"}, "TopicArn": {topic}, "PublishBatchRequestEntries.member.1.Id": {"a"},
				"PublishBatchRequestEntries.member.1.Message":                                     {"m"},
				"PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Name":              {"t"},
				"PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.DataType":    {dt},
				"PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.StringValue": {"1"}},
		} {
			rec := httptest.NewRecorder()
			h.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), v)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%s %q: %d %s", v.Get("Action"), dt, rec.Code, rec.Body)
			}
		}
	}
	rec := httptest.NewRecorder()
	h.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), url.Values{"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"m"},
		"MessageAttributes.entry.1.Name": {"t"}, "MessageAttributes.entry.1.Value.DataType": {"Number.prix-€"},
		"MessageAttributes.entry.1.Value.StringValue": {"1"}})
	if rec.Code != 200 {
		t.Fatalf("a printable label: %d %s", rec.Code, rec.Body)
	}
}

// JSON given as attribute values (Policy, DeliveryPolicy, FilterPolicy,
// ArchivePolicy...) is parsed by encoding/json, whose scanner stops at
// 10,000 levels without recursing, or by the filter's own parser, which
// stops at Jackson's 1,000: megabytes of '[' are refused cheaply.
func TestDeepJSONAttributesRefusedCheaply(t *testing.T) {
	h := direct(t)
	topic := "arn:aws:sns:us-east-1:000000000000:t"
	deep := strings.Repeat("[", 4<<20)
	rec := httptest.NewRecorder()
	h.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), url.Values{"Action": {"Subscribe"}, "TopicArn": {topic},
		"Protocol": {"sqs"}, "Endpoint": {"arn:aws:sqs:us-east-1:000000000000:q"}})
	sub := topic + ":" + strings.SplitN(strings.SplitN(rec.Body.String(), topic+":", 2)[1], "<", 2)[0]
	for _, v := range []url.Values{
		{"Action": {"SetTopicAttributes"}, "TopicArn": {topic}, "AttributeName": {"Policy"}, "AttributeValue": {deep}},
		{"Action": {"SetTopicAttributes"}, "TopicArn": {topic}, "AttributeName": {"DeliveryPolicy"}, "AttributeValue": {deep}},
		{"Action": {"SetSubscriptionAttributes"}, "SubscriptionArn": {sub}, "AttributeName": {"FilterPolicy"}, "AttributeValue": {deep}},
		{"Action": {"SetSubscriptionAttributes"}, "SubscriptionArn": {sub}, "AttributeName": {"RedrivePolicy"}, "AttributeValue": {deep}},
		{"Action": {"SetSubscriptionAttributes"}, "SubscriptionArn": {sub}, "AttributeName": {"DeliveryPolicy"}, "AttributeValue": {deep}},
		{"Action": {"Publish"}, "TopicArn": {topic}, "Message": {deep}, "MessageStructure": {"json"}},
	} {
		rec := httptest.NewRecorder()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h.ServeQuery(rec, httptest.NewRequest("POST", "/", nil), v)
		runtime.ReadMemStats(&after)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>InvalidParameter</Code>") {
			t.Errorf("%s %s: %d %.300s", v.Get("Action"), v.Get("AttributeName"), rec.Code, rec.Body)
		}
		// A recursive parser shows in the stacks, a quadratic one in the bytes
		// allocated. The process's Sys is not used: the heap maps 64 MiB
		// arenas, so it jumps by that whenever the collector runs late.
		stack := int64(after.StackSys) - int64(before.StackSys)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s %s: stack grew %d bytes, %d bytes allocated", v.Get("Action"), v.Get("AttributeName"), stack, alloc)
		if stack > 1<<20 || alloc > 32*uint64(len(deep)) {
			t.Errorf("%s %s: a 4 MiB deep value grew the stacks by %d bytes and allocated %d", v.Get("Action"), v.Get("AttributeName"), stack, alloc)
		}
	}
}
