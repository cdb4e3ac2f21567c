package api_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/delivery"
)

var confirmationKeys = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}

func TestHTTPConfirmationFlow(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	h := sink(t, false)
	topic := e.topic(t, "t", nil)
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(h.URL + "/a")})
	if err != nil || aws.ToString(out.SubscriptionArn) != "pending confirmation" {
		t.Fatalf("Subscribe: %v %v", out, err)
	}
	conf := h.waitFor(t, delivery.TypeSubscriptionConfirmation, 1)[0]
	for k, v := range map[string]string{
		"Content-Type": "text/plain; charset=UTF-8", "User-Agent": "Amazon Simple Notification Service Agent",
		"X-Amz-Sns-Message-Type": "SubscriptionConfirmation", "X-Amz-Sns-Topic-Arn": topic, "X-Amz-Sns-Subscription-Arn": "",
	} {
		if got := conf.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	msg := conf.json(t)
	if got := keysInOrder(t, conf.Body); strings.Join(got, ",") != "Type,MessageId,Token,TopicArn,Message,SubscribeURL,Timestamp,SignatureVersion,Signature,SigningCertURL" {
		t.Fatalf("fields %v", got)
	}
	if msg["MessageId"] != conf.Header.Get("X-Amz-Sns-Message-Id") || !strings.Contains(msg["Message"].(string), topic) {
		t.Fatalf("confirmation %s", conf.Body)
	}
	verifyKeys(t, msg, msg["SigningCertURL"].(string), confirmationKeys)

	// Pending until confirmed: nothing is delivered.
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("early")})
	e.settle(t)
	if n := len(h.requests(delivery.TypeNotification)); n != 0 {
		t.Fatalf("pending subscription got %d notifications", n)
	}
	// Subscribing again sends the confirmation again, with the same token.
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(h.URL + "/a")}); err != nil {
		t.Fatal(err)
	}
	if again := h.waitFor(t, delivery.TypeSubscriptionConfirmation, 2)[1].json(t); again["Token"] != msg["Token"] || again["MessageId"] == msg["MessageId"] {
		t.Fatalf("second confirmation %v", again)
	}
	confirmed, err := e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(msg["Token"].(string))})
	if err != nil {
		t.Fatal(err)
	}
	sub := aws.ToString(confirmed.SubscriptionArn)
	attrs, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	if err != nil || attrs.Attributes["PendingConfirmation"] != "false" || attrs.Attributes["ConfirmationWasAuthenticated"] != "true" {
		t.Fatalf("attributes %v %v", attrs, err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("now")})
	if got := h.waitFor(t, delivery.TypeNotification, 1)[0].json(t); got["Message"] != "now" {
		t.Fatalf("notification %v", got)
	}

	// A second endpoint confirms by visiting the SubscribeURL, as a browser would.
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(h.URL + "/b")}); err != nil {
		t.Fatal(err)
	}
	var second map[string]any
	for _, r := range h.waitFor(t, delivery.TypeSubscriptionConfirmation, 3) {
		if r.Path == "/b" {
			second = r.json(t)
		}
	}
	if status, body := get(t, second["SubscribeURL"].(string)); status != 200 || !strings.Contains(body, "<SubscriptionArn>"+topic+":") {
		t.Fatalf("GET SubscribeURL: %d %s", status, body)
	}

	// Unsubscribing tells the endpoint.
	if _, err := e.sns.Unsubscribe(ctx(t), &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
		t.Fatal(err)
	}
	bye := h.waitFor(t, delivery.TypeUnsubscribeConfirmation, 1)[0]
	byeMsg := bye.json(t)
	if bye.Path != "/a" || bye.Header.Get("X-Amz-Sns-Subscription-Arn") != sub || !strings.Contains(byeMsg["Message"].(string), sub) || byeMsg["Token"] == "" {
		t.Fatalf("unsubscribe confirmation %s %v", bye.Path, bye.Body)
	}
	verifyKeys(t, byeMsg, byeMsg["SigningCertURL"].(string), confirmationKeys)
}

func TestLambdaHookReceivesTheSNSEvent(t *testing.T) {
	t.Parallel()
	h := sink(t, false)
	e := start(t, fanout.Options{Lambda: map[string]string{"orders": h.URL}})
	topic := e.topic(t, "t", nil)
	dlq := e.queue(t, "dlq", nil)
	fn := "arn:aws:lambda:us-east-1:000000000000:function:orders"
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("lambda"), Endpoint: aws.String(fn), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	sub := aws.ToString(out.SubscriptionArn)
	missing, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("lambda"),
		Endpoint: aws.String(fn + "-missing"), ReturnSubscriptionArn: true,
		Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `"}`}})
	if err != nil {
		t.Fatal(err)
	}
	pub := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("order 1"),
		MessageAttributes: map[string]types.MessageAttributeValue{"store": strAttr("s1")}})
	e.settle(t)
	req := h.waitFor(t, "", 1)[0]
	if req.Path != "/2015-03-31/functions/orders/invocations" || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("invoked %s %v", req.Path, req.Header)
	}
	var event struct {
		Records []struct {
			EventSource, EventVersion, EventSubscriptionArn string
			Sns                                             map[string]any
		}
	}
	if err := json.Unmarshal([]byte(req.Body), &event); err != nil || len(event.Records) != 1 {
		t.Fatalf("event %v: %s", err, req.Body)
	}
	r := event.Records[0]
	if r.EventSource != "aws:sns" || r.EventVersion != "1.0" || r.EventSubscriptionArn != sub {
		t.Fatalf("record %+v", r)
	}
	if got := keysInOrder(t, req.Body[strings.Index(req.Body, `"Sns":`)+6:len(req.Body)-3]); strings.Join(got, ",") !=
		"Type,MessageId,TopicArn,Subject,Message,Timestamp,SignatureVersion,Signature,SigningCertUrl,UnsubscribeUrl,MessageAttributes" {
		t.Fatalf("Sns fields %v", got)
	}
	s := r.Sns
	if s["Type"] != "Notification" || s["MessageId"] != aws.ToString(pub.MessageId) || s["Subject"] != nil || s["Message"] != "order 1" ||
		s["MessageAttributes"].(map[string]any)["store"].(map[string]any)["Value"] != "s1" {
		t.Fatalf("Sns %v", s)
	}
	verifyKeys(t, s, s["SigningCertUrl"].(string), []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"})

	// A function fanout has no hook for is a client-side error: straight to the DLQ.
	if got := bodies(t, e.drain(t, dlq), true); len(got) != 1 || got[0] != "order 1" {
		t.Fatalf("DLQ %v", got)
	}
	rec := e.records(t, "subscription="+aws.ToString(missing.SubscriptionArn))[0]
	if rec.Status != delivery.StatusDeadLettered || rec.AttemptCount != 1 {
		t.Fatalf("record %+v", rec)
	}
}

func TestLambdaThrottlingIsRetried(t *testing.T) {
	t.Parallel()
	h := newHook(t, false, func(n int) int {
		if n <= 4 {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	})
	e := start(t, fanout.Options{Lambda: map[string]string{"f": h.URL + "/custom/path"}})
	topic := e.topic(t, "t", nil)
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("lambda"),
		Endpoint: aws.String("arn:aws:lambda:us-east-1:000000000000:function:f"), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	e.settle(t)
	// AWS-managed schedule: three immediate retries, then one after 1 s.
	if n := len(h.requests("")); n != 4 {
		t.Fatalf("%d attempts at once, want 4", n)
	}
	e.advance(t, time.Second)
	reqs := h.requests("")
	if len(reqs) != 5 || reqs[4].Path != "/custom/path" {
		t.Fatalf("%d attempts", len(reqs))
	}
	r := e.records(t, "subscription="+aws.ToString(out.SubscriptionArn))[0]
	if r.Status != delivery.StatusDelivered || r.AttemptCount != 5 || r.MaxAttempts != 100015 {
		t.Fatalf("record %+v", r)
	}
}

func TestHTTPSWithASelfSignedCertificate(t *testing.T) {
	t.Parallel()
	for _, insecure := range []bool{false, true} {
		e := start(t, fanout.Options{InsecureEndpoints: insecure})
		h := sink(t, true)
		topic := e.topic(t, "t", nil)
		out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("https"),
			Endpoint: aws.String(h.URL), ReturnSubscriptionArn: true})
		if err != nil {
			t.Fatal(err)
		}
		e.settle(t)
		r := e.records(t, "subscription="+aws.ToString(out.SubscriptionArn))[0]
		if insecure && (r.Status != delivery.StatusDelivered || len(h.requests("")) != 1) {
			t.Fatalf("insecure: %+v", r)
		}
		if !insecure && (r.Status != delivery.StatusRetrying || !strings.Contains(r.Attempts[0].Error, "certificate") || len(h.requests("")) != 0) {
			t.Fatalf("verified: %+v", r)
		}
	}
}

func TestSlowEndpointTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Sns-Message-Type") == "Notification" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	})
	h := httptest.NewServer(slow)
	t.Cleanup(h.Close)
	t.Cleanup(func() { close(release) })
	e := start(t, fanout.Options{EndpointTimeout: 50 * time.Millisecond})
	topic := e.topic(t, "t", nil)
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"),
		Endpoint: aws.String(h.URL), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	sub := aws.ToString(out.SubscriptionArn)
	e.settle(t)
	tok := e.srv.SNS().PendingSubscriptions()[0].Token
	if _, err := e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(tok)}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	e.settle(t)
	r := e.records(t, "type=Notification&subscription="+sub)[0]
	if r.Status != delivery.StatusRetrying || !strings.Contains(r.Attempts[0].Error, "no answer within 50ms") {
		t.Fatalf("record %+v", r)
	}
}

// smtpServer is a minimal SMTP server on loopback that keeps what it is
// sent; a recipient starting with "bounce" is refused for good.
type smtpServer struct {
	addr string
	mail chan string
}

func newSMTPServer(t *testing.T) *smtpServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &smtpServer{addr: l.Addr().String(), mail: make(chan string, 100)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { _, _ = c.Write([]byte(line + "\r\n")) }
	say("220 test ready")
	var msg strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 test")
		case strings.HasPrefix(cmd, "MAIL FROM"):
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO"):
			if strings.Contains(cmd, "<BOUNCE") {
				say("550 no such user")
			} else {
				say("250 ok")
			}
		case cmd == "DATA":
			say("354 go ahead")
			msg.Reset()
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				msg.WriteString(l)
			}
			s.mail <- msg.String()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func TestEmailIsConfirmedAndSentBySMTP(t *testing.T) {
	t.Parallel()
	mail := newSMTPServer(t)
	e := start(t, fanout.Options{SMTP: mail.addr})
	topic := e.topic(t, "t", map[string]string{"DisplayName": "Shop"})
	dlq := e.queue(t, "dlq", nil)
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("email"), Endpoint: aws.String("ops@example.com")}); err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	conf := <-mail.mail
	if !strings.Contains(conf, "Subject: AWS Notification - Subscription Confirmation") || !strings.Contains(conf, "From: \"Shop\" <no-reply@sns.amazonaws.com>") {
		t.Fatalf("confirmation mail:\n%s", conf)
	}
	i := strings.Index(conf, "http://")
	link := strings.TrimSpace(conf[i : i+strings.Index(conf[i:], "\r\n")])
	if status, _ := get(t, link); status != 200 {
		t.Fatalf("GET %s: %d", link, status)
	}
	box := e.outbox(t, "protocol=email")
	if len(box) != 1 || box[0].Type != delivery.TypeSubscriptionConfirmation || box[0].Endpoint != "ops@example.com" {
		t.Fatalf("outbox %+v", box)
	}

	bounce, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("email-json"),
		Endpoint: aws.String("bounce@example.com"), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	if _, err := e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(e.srv.SNS().PendingSubscriptions()[0].Token)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: bounce.SubscriptionArn,
		AttributeName: aws.String("RedrivePolicy"), AttributeValue: aws.String(`{"deadLetterTargetArn":"` + dlq.ARN + `"}`)}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Subject: aws.String("Order shipped"), Message: aws.String("Your order is on its way.")})
	e.settle(t)
	note := <-mail.mail
	if !strings.Contains(note, "Subject: Order shipped") || !strings.Contains(note, "Your order is on its way.") || !strings.Contains(note, "Action=Unsubscribe") {
		t.Fatalf("notification mail:\n%s", note)
	}
	// The refused address (SMTP 550) is a client-side error.
	if got := bodies(t, e.drain(t, dlq), true); len(got) != 1 || got[0] != "Your order is on its way." {
		t.Fatalf("DLQ %v", got)
	}
}

func TestSMSPushAndFirehoseLandInTheOutbox(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	topic := e.topic(t, "t", map[string]string{"DisplayName": "Shop"})
	for _, s := range [][2]string{
		{"sms", "+15555550100"},
		{"application", "arn:aws:sns:us-east-1:000000000000:endpoint/GCM/app/1a2b"},
		{"firehose", "arn:aws:firehose:us-east-1:000000000000:deliverystream/s"},
	} {
		attrs := map[string]string{}
		if s[0] == "firehose" {
			attrs["SubscriptionRoleArn"] = "arn:aws:iam::000000000000:role/r"
		}
		out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String(s[0]), Endpoint: aws.String(s[1]), Attributes: attrs})
		if err != nil || !strings.HasPrefix(aws.ToString(out.SubscriptionArn), topic+":") {
			t.Fatalf("%s: %v %v (confirmed at once, as on AWS)", s[0], out, err)
		}
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"),
		Message: aws.String(`{"default":"hi","sms":"hi by text","GCM":"{\"data\":{\"m\":\"hi\"}}"}`)})
	if got := e.outbox(t, "protocol=sms"); len(got) != 1 || got[0].Body != "hi by text" || got[0].From != "Shop" {
		t.Fatalf("sms %+v", got)
	}
	if got := e.outbox(t, "protocol=application"); len(got) != 1 || got[0].Body != `{"data":{"m":"hi"}}` {
		t.Fatalf("application %+v", got)
	}
	if got := e.outbox(t, "endpoint=arn:aws:firehose:us-east-1:000000000000:deliverystream/s"); len(got) != 1 || !strings.Contains(got[0].Body, `"Message" : "hi"`) {
		t.Fatalf("firehose %+v", got)
	}
}

// outbox reads GET /_fanout/sns/outbox.
func (e *env) outbox(t *testing.T, query string) []delivery.OutboxEntry {
	t.Helper()
	_, body := get(t, e.srv.URL()+"/_fanout/sns/outbox?"+query)
	var out struct{ Messages []delivery.OutboxEntry }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return out.Messages
}
