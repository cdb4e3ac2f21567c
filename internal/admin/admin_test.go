package admin_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/admin"
	"github.com/fanout/fanout/internal/sdktest"
)

// env is a fanout on a manual clock with SDK clients.
type env struct {
	t     *testing.T
	srv   *fanout.Server
	url   string
	clock *clock.Manual
	sqs   *sqs.Client
	sns   *sns.Client
	ctx   context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	m := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	srv, err := fanout.Start(context.Background(), fanout.Options{Clock: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	cfg := sdktest.Config()
	return &env{
		t: t, srv: srv, url: srv.URL(), clock: m, ctx: context.Background(),
		sqs: sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.URL()) }),
		sns: sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(srv.URL()) }),
	}
}

// call sends a request and returns the status and body; a POST body is JSON.
func (e *env) call(method, path, body string, header ...string) (int, string, http.Header) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (e *env) json(method, path, body string, want int, into any) {
	e.t.Helper()
	code, b, _ := e.call(method, path, body)
	if code != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(b), into); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

func (e *env) queue(name string, attrs map[string]string) string {
	e.t.Helper()
	out, err := e.sqs.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		e.t.Fatal(err)
	}
	return *out.QueueUrl
}

func (e *env) send(url, body string, delay int32) {
	e.t.Helper()
	_, err := e.sqs.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body, DelaySeconds: delay,
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"store": {DataType: aws.String("String"), StringValue: aws.String("eu-west")}}})
	if err != nil {
		e.t.Fatal(err)
	}
}

type peekPage struct {
	Messages []struct {
		MessageID        string `json:"messageId"`
		Body             string
		State            string
		ReceiveCount     int
		StateEnds        *time.Time
		Attributes       map[string]struct{ DataType, StringValue string }
		SystemAttributes map[string]string
	}
	More bool
}

func TestPeekEndpointShowsEveryStateAndChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.queue("peeked", nil)
	e.send(u, "one", 0)
	e.send(u, "two", 0)
	e.send(u, "later", 60)
	got, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &u, MaxNumberOfMessages: 1, VisibilityTimeout: 30})
	if err != nil || len(got.Messages) != 1 {
		t.Fatal(err, got)
	}

	var page peekPage
	e.json("GET", "/_fanout/sqs/queues/peeked/messages", "", 200, &page)
	if len(page.Messages) != 3 {
		t.Fatalf("%+v", page)
	}
	states := map[string]string{}
	for _, m := range page.Messages {
		states[m.Body] = m.State
	}
	if states["two"] != "visible" || states["one"] != "inflight" || states["later"] != "delayed" {
		t.Fatalf("states %v", states)
	}
	for _, m := range page.Messages {
		switch m.State {
		case "inflight":
			if m.ReceiveCount != 1 || m.StateEnds == nil || !m.StateEnds.Equal(e.clock.Now().Add(30*time.Second)) {
				t.Errorf("in flight: %+v", m)
			}
		case "delayed":
			if m.StateEnds == nil || !m.StateEnds.Equal(e.clock.Now().Add(60*time.Second)) {
				t.Errorf("delayed: %+v", m)
			}
		case "visible":
			if m.StateEnds != nil || m.Attributes["store"].StringValue != "eu-west" || m.SystemAttributes["SentTimestamp"] == "" {
				t.Errorf("visible: %+v", m)
			}
		}
	}
	e.json("GET", "/_fanout/sqs/queues/peeked/messages?state=delayed,inflight&limit=1", "", 200, &page)
	if len(page.Messages) != 1 || page.Messages[0].State != "inflight" || !page.More {
		t.Fatalf("limit 1: %+v", page)
	}
	// Peeking changed nothing: the counts and the receive count are as before.
	attrs, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []sqstypes.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if a := attrs.Attributes; a["ApproximateNumberOfMessages"] != "1" || a["ApproximateNumberOfMessagesNotVisible"] != "1" || a["ApproximateNumberOfMessagesDelayed"] != "1" {
		t.Fatalf("counts after peek: %v", a)
	}

	for _, bad := range []struct{ path, want string }{
		{"/_fanout/sqs/queues/peeked/messages?limit=abc", "limit"},
		{"/_fanout/sqs/queues/peeked/messages?limit=0", "limit"},
		{"/_fanout/sqs/queues/peeked/messages?limit=5000", "limit"},
		{"/_fanout/sqs/queues/peeked/messages?state=bogus", "state"},
	} {
		code, body, _ := e.call("GET", bad.path, "")
		if code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("%s: %d %s", bad.path, code, body)
		}
	}
	if code, body, _ := e.call("GET", "/_fanout/sqs/queues/nope/messages", ""); code != 404 || !strings.Contains(body, "nope") {
		t.Errorf("unknown queue: %d %s", code, body)
	}
}

func TestNamespaceAnswers404And405AndListsEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var api struct{ Endpoints []admin.Endpoint }
	e.json("GET", "/_fanout/api", "", 200, &api)
	seen := map[string]bool{}
	for _, ep := range api.Endpoints {
		seen[ep.Method+" "+ep.Path] = true
		if ep.Summary == "" {
			t.Errorf("%s %s has no summary: add a line to summaries in internal/admin/namespace.go", ep.Method, ep.Path)
		}
	}
	for _, want := range []string{"GET,HEAD /_fanout/health", "GET /_fanout/sqs/queues/{name}/messages", "GET /_fanout/deliveries", "POST /_fanout/filter/test", "GET,HEAD /_localstack/health", "GET,HEAD /_fanout/"} {
		if !seen[want] {
			t.Errorf("%q not listed in %v", want, seen)
		}
	}

	code, body, _ := e.call("GET", "/_fanout/nothing-here", "")
	var nf struct {
		Error     string
		Endpoints []admin.Endpoint
	}
	if err := json.Unmarshal([]byte(body), &nf); err != nil || code != 404 || len(nf.Endpoints) != len(api.Endpoints) || !strings.Contains(nf.Error, "/_fanout/nothing-here") {
		t.Errorf("unknown path: %d %s", code, body)
	}
	code, body, hdr := e.call("DELETE", "/_fanout/clock", "")
	if code != 405 || !strings.Contains(hdr.Get("Allow"), "GET") || !strings.Contains(hdr.Get("Allow"), "POST") || !strings.Contains(body, "DELETE") {
		t.Errorf("wrong method: %d %s %v", code, body, hdr)
	}
	// The AWS endpoint is not part of the namespace: an unknown call there
	// is still AWS's error.
	if code, body, _ := e.call("GET", "/", ""); code != 400 || !strings.Contains(body, "MissingAction") {
		t.Errorf("GET /: %d %s", code, body)
	}
	if code, _, _ := e.call("GET", "/_fanout", ""); code != 200 {
		t.Errorf("GET /_fanout: %d", code)
	}
}

func TestDashboardActionsSendPurgePublishRedrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dlq := e.queue("jobs-dlq", nil)
	_ = dlq
	jobs := e.queue("jobs", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","maxReceiveCount":"1"}`})

	var sent struct{ MessageID string }
	e.json("POST", "/_fanout/sqs/queues/jobs/send", `{"body":"<b>hi</b>","attributes":{"store":{"DataType":"String","StringValue":"eu"}},"delaySeconds":0}`, 200, &sent)
	if sent.MessageID == "" {
		t.Fatal("no message id")
	}
	// Receive it once, let the visibility timeout pass: the next receive
	// moves it to the DLQ.
	if _, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &jobs, VisibilityTimeout: 1}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Second)
	if _, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &jobs}); err != nil {
		t.Fatal(err)
	}
	var g struct {
		Queues []struct {
			Name, DeadLetterQueue string
			Visible, InFlight     int
			Sources               []string
			DeadLettered          int64
		}
	}
	e.json("GET", "/_fanout/graph", "", 200, &g)
	byName := map[string]int{}
	for i, q := range g.Queues {
		byName[q.Name] = i
	}
	if q := g.Queues[byName["jobs"]]; q.DeadLetterQueue != "jobs-dlq" || q.DeadLettered != 1 {
		t.Fatalf("jobs: %+v", q)
	}
	if q := g.Queues[byName["jobs-dlq"]]; q.Visible != 1 || len(q.Sources) != 1 || q.Sources[0] != "jobs" {
		t.Fatalf("dlq: %+v", q)
	}

	var task struct{ TaskHandle string }
	e.json("POST", "/_fanout/sqs/queues/jobs-dlq/redrive", `{}`, 200, &task)
	if task.TaskHandle == "" {
		t.Fatal("no task handle")
	}
	e.clock.Advance(2 * time.Second)
	var page peekPage
	e.json("GET", "/_fanout/sqs/queues/jobs/messages", "", 200, &page)
	if len(page.Messages) != 1 || page.Messages[0].Body != "<b>hi</b>" {
		t.Fatalf("after redrive: %+v", page)
	}
	// A redrive of a queue that is no DLQ is AWS's error, with its status.
	code, body, _ := e.call("POST", "/_fanout/sqs/queues/jobs/redrive", `{}`)
	if code != 400 || !strings.Contains(body, "code") {
		t.Errorf("redrive of a source: %d %s", code, body)
	}

	e.json("POST", "/_fanout/sqs/queues/jobs/purge", `{}`, 200, nil)
	e.json("GET", "/_fanout/sqs/queues/jobs/messages", "", 200, &page)
	if len(page.Messages) != 0 {
		t.Fatalf("after purge: %+v", page)
	}
	code, body, _ = e.call("POST", "/_fanout/sqs/queues/jobs/purge", `{}`)
	if code != 400 || !strings.Contains(body, "PurgeQueueInProgress") {
		t.Errorf("second purge: %d %s", code, body)
	}

	topic, err := e.sns.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	audit := e.queue("audit", nil)
	_ = audit
	if _, err := e.sns.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:audit"),
		Attributes: map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"store":["eu"]}`}}); err != nil {
		t.Fatal(err)
	}
	var pub struct{ MessageID string }
	e.json("POST", "/_fanout/sns/topics/events/publish", `{"message":"m1","attributes":{"store":{"DataType":"String","StringValue":"eu"}}}`, 200, &pub)
	e.json("POST", "/_fanout/sns/topics/events/publish", `{"message":"m2"}`, 200, nil)
	e.json("GET", "/_fanout/sqs/queues/audit/messages", "", 200, &page)
	if len(page.Messages) != 1 || page.Messages[0].Body != "m1" || page.Messages[0].Attributes["store"].StringValue != "eu" {
		t.Fatalf("published: %+v", page)
	}
	var g2 struct {
		Topics []struct {
			Name          string
			Published     int64
			Subscriptions []struct {
				Matched, Filtered, Delivered int64
				Queue                        string
			}
		}
	}
	e.json("GET", "/_fanout/graph", "", 200, &g2)
	if len(g2.Topics) != 1 || g2.Topics[0].Published != 2 {
		t.Fatalf("%+v", g2)
	}
	if s := g2.Topics[0].Subscriptions[0]; s.Matched != 1 || s.Filtered != 1 || s.Delivered != 1 || s.Queue != "audit" {
		t.Fatalf("edge counts %+v", s)
	}

	for _, bad := range []struct {
		path, body, ctype string
		want              int
	}{
		{"/_fanout/sqs/queues/jobs/send", `{"body":"x"}`, "application/x-www-form-urlencoded", 415},
		{"/_fanout/sqs/queues/jobs/send", `{"body":"x"}`, "text/plain", 415},
		{"/_fanout/sqs/queues/jobs/send", `{"bodyy":"x"}`, "application/json", 400},
		{"/_fanout/sqs/queues/jobs/send", `not json`, "application/json", 400},
		{"/_fanout/sqs/queues/jobs/send", `{"body":""}`, "application/json", 400},
		{"/_fanout/sqs/queues/jobs/send", `{"body":"x","attributes":{"b":{"DataType":"Binary","BinaryValue":"!!"}}}`, "application/json", 400},
		{"/_fanout/sqs/queues/nope/send", `{"body":"x"}`, "application/json", 400},
		{"/_fanout/sns/topics/nope/publish", `{"message":"x"}`, "application/json", 404},
		{"/_fanout/sns/topics/events/publish", `{"message":""}`, "application/json", 400},
		{"/_fanout/sqs/queues/jobs-dlq/redrive", `{"rate":-1}`, "application/json", 400},
	} {
		code, body, _ := e.call("POST", bad.path, bad.body, "Content-Type", bad.ctype)
		if code != bad.want {
			t.Errorf("POST %s %s (%s): %d %s, want %d", bad.path, bad.body, bad.ctype, code, body, bad.want)
		}
	}
	// A page on another site cannot post here, whatever it sends.
	code, body, _ = e.call("POST", "/_fanout/sqs/queues/jobs/send", `{"body":"x"}`, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if code != 403 {
		t.Errorf("cross-site POST: %d %s", code, body)
	}
}

func TestDueListsRetriesDelaysAndVisibilityEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.queue("waiting", nil)
	e.send(u, "delayed", 90)
	e.send(u, "taken", 0)
	if _, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &u, VisibilityTimeout: 40}); err != nil {
		t.Fatal(err)
	}
	var due struct {
		Due []struct{ Kind, Queue, In string }
	}
	e.json("GET", "/_fanout/clock/due?limit=5", "", 200, &due)
	if len(due.Due) != 2 || due.Due[0].Kind != "visibility-ends" || due.Due[0].In != "40s" || due.Due[1].Kind != "delay-ends" || due.Due[1].Queue != "waiting" {
		t.Fatalf("%+v", due)
	}
	if code, _, _ := e.call("GET", "/_fanout/clock/due?limit=-3", ""); code != 400 {
		t.Errorf("limit=-3: %d", code)
	}
}

func TestLocalStackHealthAndPeek(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var health struct{ Services map[string]string }
	e.json("GET", "/_localstack/health", "", 200, &health)
	if health.Services["sqs"] != "running" || health.Services["sns"] != "running" {
		t.Fatalf("%+v", health)
	}
	u := e.queue("ls", nil)
	e.send(u, "taken", 0)
	e.send(u, "<visible>", 0)
	e.send(u, "delayed", 30)
	if _, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &u, MaxNumberOfMessages: 1}); err != nil {
		t.Fatal(err)
	}
	// LocalStack's own URL shape for the queue must work too.
	lsURL := "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/ls"
	code, body, _ := e.call("GET", "/_aws/sqs/messages?QueueUrl="+lsURL, "")
	var x struct {
		XMLName  xml.Name `xml:"ReceiveMessageResponse"`
		Messages []struct {
			Body          string
			ReceiptHandle string
			Attributes    []struct{ Name, Value string } `xml:"Attribute"`
			MessageAttrs  []struct {
				Name  string
				Value struct{ StringValue, DataType string }
			} `xml:"MessageAttribute"`
		} `xml:"ReceiveMessageResult>Message"`
		RequestID string `xml:"ResponseMetadata>RequestId"`
	}
	if err := xml.Unmarshal([]byte(body), &x); err != nil || code != 200 {
		t.Fatalf("%d %v %s", code, err, body)
	}
	if len(x.Messages) != 1 || x.Messages[0].Body != "<visible>" || x.Messages[0].ReceiptHandle != "SQS/BACKDOOR/ACCESS" || x.RequestID == "" ||
		len(x.Messages[0].MessageAttrs) != 1 || x.Messages[0].MessageAttrs[0].Value.StringValue != "eu-west" {
		t.Fatalf("visible only: %+v", x)
	}

	code, body, hdr := e.call("GET", "/_aws/sqs/messages/us-east-1/000000000000/ls?ShowInvisible=true&ShowDelayed=true", "", "Accept", "application/json")
	var j struct {
		ReceiveMessageResponse struct {
			ReceiveMessageResult struct {
				Message []struct {
					Body      string
					Attribute []struct{ Name, Value string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &j); err != nil || code != 200 || !strings.Contains(hdr.Get("Content-Type"), "json") {
		t.Fatalf("%d %v %s", code, err, body)
	}
	marks := map[string]string{}
	for _, m := range j.ReceiveMessageResponse.ReceiveMessageResult.Message {
		a := map[string]string{}
		for _, kv := range m.Attribute {
			a[kv.Name] = kv.Value
		}
		marks[m.Body] = a["IsVisible"] + "/" + a["IsDelayed"]
	}
	if marks["<visible>"] != "true/false" || marks["taken"] != "false/false" || marks["delayed"] != "false/true" {
		t.Fatalf("marks %v in %s", marks, body)
	}
	// Still unchanged: one receive's worth of in-flight messages.
	attrs, _ := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessagesNotVisible"}})
	if attrs.Attributes["ApproximateNumberOfMessagesNotVisible"] != "1" {
		t.Fatalf("%v", attrs.Attributes)
	}

	for _, bad := range []struct {
		path, want string
		code       int
	}{
		{"/_aws/sqs/messages", "MissingParameter", 400},
		{"/_aws/sqs/messages?QueueUrl=http://localhost:4566/000000000000/nope", "NonExistentQueue", 400},
		{"/_aws/sqs/messages/eu-west-1/000000000000/ls", "NonExistentQueue", 400},
		{"/_aws/sqs/messages/us-east-1/111111111111/ls", "NonExistentQueue", 400},
		{"/_aws/sqs/messages/us-east-1/000000000000/ls?ShowInvisible=maybe", "InvalidParameterValue", 400},
	} {
		code, body, _ := e.call("GET", bad.path, "")
		if code != bad.code || !strings.Contains(body, bad.want) {
			t.Errorf("%s: %d %s", bad.path, code, body)
		}
	}
}

func TestLocalStackSNSEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic, err := e.sns.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String("alerts")})
	if err != nil {
		t.Fatal(err)
	}
	smsSub, err := e.sns.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sms"), Endpoint: aws.String("+15555550100"), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	// An http subscription stays pending: its endpoint never answers.
	httpSub, err := e.sns.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String("http://127.0.0.1:9/hook"), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.Publish(e.ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("disk full"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}}); err != nil {
		t.Fatal(err)
	}
	_ = e.srv.Deliveries().Settle(e.ctx)

	var sms struct {
		SMSMessages map[string][]struct{ PhoneNumber, Message, TopicArn string } `json:"sms_messages"`
		Region      string
	}
	e.json("GET", "/_aws/sns/sms-messages", "", 200, &sms)
	if got := sms.SMSMessages["+15555550100"]; len(got) != 1 || got[0].Message != "disk full" || got[0].TopicArn != *topic.TopicArn || sms.Region != "us-east-1" {
		t.Fatalf("%+v", sms)
	}
	sms.SMSMessages = nil
	e.json("GET", "/_aws/sns/sms-messages?phoneNumber=%2B15555550199", "", 200, &sms)
	if len(sms.SMSMessages) != 0 {
		t.Fatalf("other number: %+v", sms)
	}
	sms.SMSMessages = nil
	e.json("GET", "/_aws/sns/sms-messages?accountId=123456789012", "", 200, &sms)
	if len(sms.SMSMessages) != 0 {
		t.Fatalf("other account: %+v", sms)
	}
	var push struct {
		Messages map[string][]any `json:"platform_endpoint_messages"`
	}
	e.json("GET", "/_aws/sns/platform-endpoint-messages", "", 200, &push)
	if push.Messages == nil || len(push.Messages) != 0 {
		t.Fatalf("%+v", push)
	}

	var tok struct {
		Token string `json:"subscription_token"`
		Arn   string `json:"subscription_arn"`
	}
	e.json("GET", "/_aws/sns/subscription-tokens/"+*httpSub.SubscriptionArn, "", 200, &tok)
	if tok.Arn != *httpSub.SubscriptionArn || len(tok.Token) < 16 {
		t.Fatalf("%+v", tok)
	}
	if _, err := e.sns.ConfirmSubscription(e.ctx, &sns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: &tok.Token}); err != nil {
		t.Fatalf("confirming with the token: %v", err)
	}
	for _, bad := range []struct {
		arn  string
		code int
	}{
		{*smsSub.SubscriptionArn, 404}, // confirmed at once: no token
		{*topic.TopicArn + ":00000000-0000-0000-0000-000000000000", 404},
		{"not-an-arn", 400},
	} {
		if code, body, _ := e.call("GET", "/_aws/sns/subscription-tokens/"+bad.arn, ""); code != bad.code {
			t.Errorf("%s: %d %s", bad.arn, code, body)
		}
	}
	if code, _, _ := e.call("DELETE", "/_aws/sns/sms-messages", ""); code != 405 {
		t.Errorf("DELETE sms-messages: %d (fanout's outbox is not cleared this way)", code)
	}
}

func TestQueueListShowsOldestAgeAndTags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.queue("aged", nil)
	if _, err := e.sqs.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &u, Tags: map[string]string{"team": "</script>"}}); err != nil {
		t.Fatal(err)
	}
	e.send(u, "old", 0)
	e.clock.Advance(90 * time.Second)
	e.send(u, "new", 0)
	var list struct {
		Queues []struct {
			Name             string
			OldestAgeSeconds float64
			Tags             map[string]string
		}
	}
	e.json("GET", "/_fanout/sqs/queues", "", 200, &list)
	if len(list.Queues) != 1 || list.Queues[0].OldestAgeSeconds != 90 || list.Queues[0].Tags["team"] != "</script>" {
		t.Fatalf("%+v", list)
	}
}

func TestQueueListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, n := range []string{"q-a", "q-b", "q-c", "q-d", "q-e"} {
		e.queue(n, nil)
	}
	type page struct {
		Queues []struct{ Name string }
		Next   string
	}
	var names []string
	next := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		var p page
		e.json("GET", "/_fanout/sqs/queues?limit=2&next="+next, "", 200, &p)
		if len(p.Queues) > 2 {
			t.Fatalf("page of %d queues with limit=2", len(p.Queues))
		}
		for _, q := range p.Queues {
			names = append(names, q.Name)
		}
		if p.Next == "" {
			break
		}
		next = p.Next
	}
	if strings.Join(names, ",") != "q-a,q-b,q-c,q-d,q-e" {
		t.Fatalf("pages gave %v", names)
	}
	for _, bad := range []string{"?limit=abc", "?limit=1001", "?limit=-1"} {
		if code, body, _ := e.call("GET", "/_fanout/sqs/queues"+bad, ""); code != 400 {
			t.Errorf("%s: %d %s, want 400", bad, code, body)
		}
	}
}
