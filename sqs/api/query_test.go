package api_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

// post sends a Query-protocol call as the AWS CLI 2.9 does (a signed form
// POST) and returns the status and body.
func post(t *testing.T, endpoint, path string, form url.Values) (int, string) {
	t.Helper()
	if form.Get("Version") == "" {
		form.Set("Version", "2012-11-05")
	}
	resp, err := sdktest.PostForm(endpoint+path, form, "sqs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/xml" {
		t.Fatalf("content type %q", ct)
	}
	if resp.Header.Get("X-Amzn-Requestid") == "" {
		t.Fatal("no request id header")
	}
	return resp.StatusCode, string(b)
}

var requestID = regexp.MustCompile(`<RequestId>[0-9a-f-]{36}</RequestId>`)

// normal replaces the request id so replies can be compared whole.
func normal(s string) string { return requestID.ReplaceAllString(s, "<RequestId>RID</RequestId>") }

func startQuery(t *testing.T) string {
	t.Helper()
	_, s := start(t, fanout.Options{})
	return s.URL()
}

func TestQueryRepliesByteForByte(t *testing.T) {
	t.Parallel()
	ep := startQuery(t)
	host := strings.TrimPrefix(ep, "http://")
	code, body := post(t, ep, "/", url.Values{"Action": {"CreateQueue"}, "QueueName": {"xmlq"}, "Attribute.1.Name": {"VisibilityTimeout"}, "Attribute.1.Value": {"40"}, "Tag.1.Key": {"team"}, "Tag.1.Value": {"a"}})
	want := `<?xml version="1.0"?><CreateQueueResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><CreateQueueResult><QueueUrl>http://` + host + `/000000000000/xmlq</QueueUrl></CreateQueueResult><ResponseMetadata><RequestId>RID</RequestId></ResponseMetadata></CreateQueueResponse>`
	if code != 200 || normal(body) != want {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"GetQueueUrl"}, "QueueName": {"missing"}})
	want = `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`
	if code != 400 || normal(body) != want {
		t.Fatalf("%d %s", code, body)
	}
	// Posted to the queue's own path, without QueueUrl.
	code, body = post(t, ep, "/000000000000/xmlq", url.Values{"Action": {"SendMessage"}, "MessageBody": {`a"b<c>&'d` + "\r"}, "MessageAttribute.1.Name": {"attr1"}, "MessageAttribute.1.Value.DataType": {"Number"}, "MessageAttribute.1.Value.StringValue": {"19.12"}})
	if code != 200 || !strings.Contains(body, "<MD5OfMessageAttributes>") || !strings.Contains(body, "<MessageId>") {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/000000000000/xmlq", url.Values{"Action": {"ReceiveMessage"}, "AttributeName.1": {"ApproximateReceiveCount"}, "MessageAttributeName.1": {"All"}})
	var recv struct {
		Result struct {
			Message []struct {
				MessageID, ReceiptHandle, MD5OfBody, Body, MD5OfMessageAttributes string
				Attribute                                                         []struct{ Name, Value string }
				MessageAttribute                                                  []struct {
					Name  string
					Value struct{ StringValue, DataType string }
				}
			}
		} `xml:"ReceiveMessageResult"`
	}
	if err := xml.Unmarshal([]byte(body), &recv); err != nil || code != 200 || len(recv.Result.Message) != 1 {
		t.Fatalf("%d %s %v", code, body, err)
	}
	m := recv.Result.Message[0]
	if m.Body != `a"b<c>&'d`+"\r" || !strings.Contains(body, "&quot;") || !strings.Contains(body, "&#xD;") {
		t.Fatalf("body %q in %s", m.Body, body)
	}
	if m.MD5OfMessageAttributes != "1f07082409022a373fa2a2601f82b3cb" || m.MessageAttribute[0].Value.DataType != "Number" {
		t.Fatalf("attributes %+v", m)
	}
	if len(m.Attribute) != 1 || m.Attribute[0].Name != "ApproximateReceiveCount" || m.Attribute[0].Value != "1" {
		t.Fatalf("system attributes %+v", m.Attribute)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"DeleteMessage"}, "QueueUrl": {ep + "/000000000000/xmlq"}, "ReceiptHandle": {m.ReceiptHandle}})
	want = `<?xml version="1.0"?><DeleteMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><ResponseMetadata><RequestId>RID</RequestId></ResponseMetadata></DeleteMessageResponse>`
	if code != 200 || normal(body) != want {
		t.Fatalf("%d %s", code, body)
	}
}

func TestQueryBatchesAndLists(t *testing.T) {
	t.Parallel()
	ep := startQuery(t)
	post(t, ep, "/", url.Values{"Action": {"CreateQueue"}, "QueueName": {"qb"}})
	q := ep + "/000000000000/qb"
	code, body := post(t, ep, "/", url.Values{"Action": {"SendMessageBatch"}, "QueueUrl": {q},
		"SendMessageBatchRequestEntry.1.Id": {"ok"}, "SendMessageBatchRequestEntry.1.MessageBody": {"x"},
		"SendMessageBatchRequestEntry.2.Id": {"bad"}, "SendMessageBatchRequestEntry.2.MessageBody": {"y"}, "SendMessageBatchRequestEntry.2.DelaySeconds": {"1000"},
	})
	if code != 200 || !strings.Contains(body, "<SendMessageBatchResultEntry><Id>ok</Id><MD5OfMessageBody>9dd4e461268c8034f5c8564e155c67a6</MD5OfMessageBody>") ||
		!strings.Contains(body, "<BatchResultErrorEntry><Id>bad</Id><SenderFault>true</SenderFault><Code>InvalidParameterValue</Code>") {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"DeleteMessageBatch"}, "QueueUrl": {q}})
	if code != 400 || !strings.Contains(body, "<Code>AWS.SimpleQueueService.EmptyBatchRequest</Code>") {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"GetQueueAttributes"}, "QueueUrl": {q}, "AttributeName.1": {"VisibilityTimeout"}, "AttributeName.2": {"DelaySeconds"}})
	if code != 200 || !strings.Contains(body, "<GetQueueAttributesResult><Attribute><Name>VisibilityTimeout</Name><Value>30</Value></Attribute><Attribute><Name>DelaySeconds</Name><Value>0</Value></Attribute></GetQueueAttributesResult>") {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"ListQueues"}, "QueueNamePrefix": {"q"}})
	if code != 200 || !strings.Contains(body, "<ListQueuesResult><QueueUrl>"+q+"</QueueUrl></ListQueuesResult>") {
		t.Fatalf("%d %s", code, body)
	}
	post(t, ep, "/", url.Values{"Action": {"TagQueue"}, "QueueUrl": {q}, "Tag.1.Key": {"k"}, "Tag.1.Value": {"v"}})
	code, body = post(t, ep, "/", url.Values{"Action": {"ListQueueTags"}, "QueueUrl": {q}})
	if code != 200 || !strings.Contains(body, "<ListQueueTagsResult><Tag><Key>k</Key><Value>v</Value></Tag></ListQueueTagsResult>") {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"PurgeQueue"}, "QueueUrl": {q}})
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"PurgeQueue"}, "QueueUrl": {q}})
	if code != 403 || !strings.Contains(body, "<Code>AWS.SimpleQueueService.PurgeQueueInProgress</Code>") {
		t.Fatalf("second purge over Query: %d %s", code, body)
	}
	code, body = post(t, ep, "/", url.Values{"Action": {"NoSuchAction"}})
	if code != 400 || !strings.Contains(body, "<Code>InvalidAction</Code>") {
		t.Fatalf("%d %s", code, body)
	}
}

// TestQueryOverGET: a GET is what any web page can make a browser send, so
// it is refused (with AWS's answer to an unsigned call), unless fanout runs
// with --allow-unsigned for old scripts.
func TestQueryOverGET(t *testing.T) {
	t.Parallel()
	get := func(ep string) (int, string) {
		resp, err := http.Get(ep + "/?Action=CreateQueue&QueueName=viaget&Version=2012-11-05")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, body := get(startQuery(t)); code != 403 || !strings.Contains(body, "<Code>MissingAuthenticationToken</Code><Message>Request is missing Authentication Token</Message>") {
		t.Fatalf("without --allow-unsigned: %d %s", code, body)
	}
	_, s := start(t, fanout.Options{AllowUnsigned: true})
	if code, body := get(s.URL()); code != 200 || !strings.Contains(body, "/000000000000/viaget</QueueUrl>") {
		t.Fatalf("with --allow-unsigned: %d %s", code, body)
	}
}

func TestJSONErrorShape(t *testing.T) {
	t.Parallel()
	ep := startQuery(t)
	req, _ := http.NewRequest("POST", ep+"/", strings.NewReader(`{"QueueUrl":"`+ep+`/000000000000/none"}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.GetQueueAttributes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || string(b) != `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}` ||
		resp.Header.Get("X-Amzn-Query-Error") != "AWS.SimpleQueueService.NonExistentQueue;Sender" || resp.Header.Get("Content-Type") != "application/x-amz-json-1.0" {
		t.Fatalf("%d %s %v", resp.StatusCode, b, resp.Header)
	}
	req, _ = http.NewRequest("POST", ep+"/", strings.NewReader(`{not json`))
	req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("malformed JSON: %d", resp.StatusCode)
	}
}
