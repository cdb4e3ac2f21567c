package api_test

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

// keysInOrder returns the top-level keys of a JSON object in document order.
func keysInOrder(t *testing.T, body string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestEnvelopeFieldByField(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, nil)
	out := e.publish(t, &sns.PublishInput{
		TopicArn: aws.String(topic), Subject: aws.String("Order placed"),
		Message: aws.String("line one\n\"quoted\" <b>&</b> é/ü \\ \t"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"store":  strAttr("example_corp"),
			"price":  {DataType: aws.String("Number"), StringValue: aws.String("10.50")},
			"blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{2, 3, 4}},
			"colors": {DataType: aws.String("String.Array"), StringValue: aws.String(`["red","green"]`)},
		},
	})
	msgs := e.drain(t, q)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	body := aws.ToString(m.Body)
	if got, want := keysInOrder(t, body), []string{"Type", "MessageId", "TopicArn", "Subject", "Message", "Timestamp",
		"SignatureVersion", "Signature", "SigningCertURL", "UnsubscribeURL", "MessageAttributes"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v\nwant   %v", got, want)
	}
	env := envelopeOf(t, m)
	base := e.srv.URL() + "/_fanout/sns/"
	for k, v := range map[string]string{
		"Type":             "Notification",
		"MessageId":        aws.ToString(out.MessageId),
		"TopicArn":         topic,
		"Subject":          "Order placed",
		"Message":          "line one\n\"quoted\" <b>&</b> é/ü \\ \t",
		"Timestamp":        "2025-03-01T12:00:00.000Z",
		"SignatureVersion": "1",
		"UnsubscribeURL":   base + "?Action=Unsubscribe&SubscriptionArn=" + sub,
	} {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `SimpleNotificationService-[0-9a-f]{32}\.pem$`).MatchString(env["SigningCertURL"].(string)) {
		t.Errorf("SigningCertURL %v", env["SigningCertURL"])
	}
	attrs, _ := json.Marshal(env["MessageAttributes"])
	if string(attrs) != `{"blob":{"Type":"Binary","Value":"AgME"},"colors":{"Type":"String.Array","Value":"[\"red\",\"green\"]"},"price":{"Type":"Number","Value":"10.50"},"store":{"Type":"String","Value":"example_corp"}}` {
		t.Errorf("MessageAttributes %s", attrs)
	}
	// AWS's layout: two-space indent, "key" : value, one attribute a line,
	// no escaping of / < > & or non-ASCII.
	for _, frag := range []string{
		"{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"",
		`"Message" : "line one\n\"quoted\" <b>&</b> é/ü \\ \t",`,
		"\n  \"MessageAttributes\" : {\n    \"",
		` : {"Type":"Number","Value":"10.50"}`,
		"\n  }\n}",
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("body lacks %q:\n%s", frag, body)
		}
	}
	// Non-raw deliveries carry no SQS message attributes; SNS is the sender.
	if len(m.MessageAttributes) != 0 || m.Attributes["SenderId"] != "AIDAIT2UOQQY3AUEKVGXU" {
		t.Errorf("SQS attributes %v, system %v", m.MessageAttributes, m.Attributes)
	}
}

// verifySignature checks a notification's signature as AWS's published
// validators do: fetch the certificate from SigningCertURL, rebuild the
// string to sign from the message's own fields, verify with the algorithm
// of its SignatureVersion.
// https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
func verifySignature(t *testing.T, env map[string]any) error {
	t.Helper()
	status, pemText := get(t, env["SigningCertURL"].(string))
	if status != 200 {
		t.Fatalf("GET SigningCertURL: %d", status)
	}
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		t.Fatalf("certificate is not PEM: %q", pemText)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, k := range []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"} {
		if v, ok := env[k]; ok {
			fmt.Fprintf(&sb, "%s\n%s\n", k, v)
		}
	}
	sig, err := base64.StdEncoding.DecodeString(env["Signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var h crypto.Hash
	var digest []byte
	switch env["SignatureVersion"] {
	case "1":
		s := sha1.Sum([]byte(sb.String()))
		h, digest = crypto.SHA1, s[:]
	case "2":
		s := sha256.Sum256([]byte(sb.String()))
		h, digest = crypto.SHA256, s[:]
	default:
		t.Fatalf("SignatureVersion %v", env["SignatureVersion"])
	}
	return rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), h, digest, sig)
}

func TestSignaturesVerifyForBothVersions(t *testing.T) {
	t.Parallel()
	e := shared(t)
	for _, version := range []string{"1", "2"} {
		attrs := map[string]string{}
		if version == "2" {
			attrs["SignatureVersion"] = "2"
		}
		topic := e.topic(t, "v"+version, attrs)
		q := e.queue(t, "q", nil)
		e.subscribe(t, topic, q, nil)
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("signed " + version)})
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("with subject"), Subject: aws.String("s")})
		for _, m := range e.drain(t, q) {
			env := envelopeOf(t, m)
			if env["SignatureVersion"] != version {
				t.Fatalf("SignatureVersion %v, want %s", env["SignatureVersion"], version)
			}
			if err := verifySignature(t, env); err != nil {
				t.Fatalf("version %s: %v", version, err)
			}
			env["Message"] = env["Message"].(string) + "!"
			if verifySignature(t, env) == nil {
				t.Fatalf("version %s: a tampered message verified", version)
			}
		}
	}
}

func TestRawDeliveryMapsAttributes(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
	e.publish(t, &sns.PublishInput{
		TopicArn: aws.String(topic), Message: aws.String(`{"order":1}`), Subject: aws.String("ignored"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"store":  strAttr("example_corp"),
			"price":  {DataType: aws.String("Number.float"), StringValue: aws.String("10.5")},
			"blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 255}},
			"colors": {DataType: aws.String("String.Array"), StringValue: aws.String(`["red",1,null]`)},
		},
	})
	msgs := e.drain(t, q)
	if len(msgs) != 1 || aws.ToString(msgs[0].Body) != `{"order":1}` {
		t.Fatalf("raw body %v", bodies(t, msgs, false))
	}
	got := msgs[0].MessageAttributes
	want := map[string]sqstypes.MessageAttributeValue{
		"store":  {DataType: aws.String("String"), StringValue: aws.String("example_corp")},
		"price":  {DataType: aws.String("Number.float"), StringValue: aws.String("10.5")},
		"blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 255}},
		"colors": {DataType: aws.String("String"), StringValue: aws.String(`["red",1,null]`)},
	}
	if len(got) != len(want) {
		t.Fatalf("attributes %v", got)
	}
	for k, w := range want {
		g := got[k]
		if aws.ToString(g.DataType) != aws.ToString(w.DataType) || aws.ToString(g.StringValue) != aws.ToString(w.StringValue) || string(g.BinaryValue) != string(w.BinaryValue) {
			t.Errorf("%s = %s %q %v, want %s %q %v", k, aws.ToString(g.DataType), aws.ToString(g.StringValue), g.BinaryValue,
				aws.ToString(w.DataType), aws.ToString(w.StringValue), w.BinaryValue)
		}
	}
}

func TestRawDeliveryOfMoreThanTenAttributesFails(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	raw, enveloped := e.queue(t, "raw", nil), e.queue(t, "env", nil)
	rawSub := e.subscribe(t, topic, raw, map[string]string{"RawMessageDelivery": "true"})
	envSub := e.subscribe(t, topic, enveloped, nil)
	attrs := map[string]types.MessageAttributeValue{}
	for i := 0; i < 11; i++ {
		attrs[fmt.Sprintf("a%d", i)] = strAttr("v")
	}
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m"), MessageAttributes: attrs})
	if n := len(e.drain(t, raw)); n != 0 {
		t.Fatalf("raw queue got %d messages", n)
	}
	if msgs := e.drain(t, enveloped); len(msgs) != 1 || len(envelopeOf(t, msgs[0])["MessageAttributes"].(map[string]any)) != 11 {
		t.Fatalf("enveloped queue got %v", bodies(t, msgs, false))
	}
	if c := e.subStats(t, rawSub); c.Failed != 1 || c.Delivered != 0 {
		t.Fatalf("raw subscription counts %+v", c)
	}
	if c := e.subStats(t, envSub); c.Delivered != 1 || c.Failed != 0 {
		t.Fatalf("enveloped subscription counts %+v", c)
	}
	found := false
	for _, f := range e.stats(t).Failures {
		if f.SubscriptionArn == rawSub {
			found = f.ClientError && strings.Contains(f.Reason, "11 message attributes")
		}
	}
	if !found {
		t.Fatalf("failure not recorded: %+v", e.stats(t).Failures)
	}
}

func TestMessageStructureJSONGivesSQSItsOwnBody(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"),
		Message: aws.String(`{"default":"for everyone","sqs":"for queues","email":"for people","lambda":{"not":"a string"}}`)})
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"),
		Message: aws.String(`{"default":"only the default"}`)})
	if got := bodies(t, e.drain(t, q), false); !slices.Equal(got, []string{"for queues", "only the default"}) {
		t.Fatalf("bodies %v", got)
	}
}

// SNS checks a published body with SQS's own rule, so its raw deliveries
// skip SQS's scan; a MessageStructure's entries are decoded JSON, which may
// hold characters SQS refuses, and are still checked.
func TestRawDeliveryChecksWhatSNSDidNot(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
	plain := "tab\t, é, \U0001F600 and \uFFFD"
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(plain)})
	for _, structured := range []string{`{"default":"x","sqs":"bell \u0007"}`, `{"default":"bell \u0007"}`} {
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"), Message: aws.String(structured)})
	}
	if got := bodies(t, e.drain(t, q), false); !slices.Equal(got, []string{plain}) {
		t.Fatalf("bodies %q", got)
	}
	if c := e.subStats(t, sub); c.Delivered != 1 || c.Failed != 2 {
		t.Fatalf("counts %+v", c)
	}
}

func TestDeliveryToAMissingQueueIsCountedAsAFailure(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, nil)
	if _, err := e.sqs.DeleteQueue(ctx(t), &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)}); err != nil {
		t.Fatal(err)
	}
	// Publish still succeeds: delivery is the subscription's business.
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	if c := e.subStats(t, sub); c.Failed != 1 {
		t.Fatalf("counts %+v", c)
	}
}

func TestUnsubscribeURLRemovesTheSubscription(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, nil)
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	msgs := e.drain(t, q)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	status, body := get(t, envelopeOf(t, msgs[0])["UnsubscribeURL"].(string))
	if status != 200 || !strings.Contains(body, "<UnsubscribeResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\">") {
		t.Fatalf("GET UnsubscribeURL: %d %s", status, body)
	}
	_, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	wantError(t, err, "NotFound", 404, "Subscription does not exist")
	// Only SNS's link actions are served there.
	status, body = get(t, e.srv.URL()+"/_fanout/sns/?Action=DeleteTopic&TopicArn="+topic)
	if status != 400 || !strings.Contains(body, "<Code>InvalidAction</Code>") {
		t.Fatalf("other action at the link path: %d %s", status, body)
	}
}

func TestEnforcedQueuePolicies(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{EnforcePolicies: true})
	topic := e.topic(t, "t", nil)
	other := e.topic(t, "other", nil)
	setPolicy := func(q queue, p string) {
		if _, err := e.sqs.SetQueueAttributes(ctx(t), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"Policy": p}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		what    string
		policy  func(q queue) string
		deliver bool
	}{
		{"no policy", func(queue) string { return "" }, false},
		{"the guide's policy", func(q queue) string { return allowSNS(q, topic) }, true},
		{"another topic's policy", func(q queue) string { return allowSNS(q, other) }, false},
		{"ArnLike with a wildcard", func(q queue) string {
			return `{"Statement":[{"Effect":"Allow","Principal":"*","Action":["sqs:ReceiveMessage","SQS:SendMessage"],"Resource":"*","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:sns:us-east-1:000000000000:*"}}}]}`
		}, true},
		{"sqs:* for the account", func(q queue) string {
			return `{"Statement":{"Effect":"Allow","Principal":{"Service":["sns.amazonaws.com"]},"Action":"sqs:*","Resource":"` + q.ARN + `","Condition":{"StringEquals":{"aws:SourceAccount":"000000000000"}}}}`
		}, true},
		{"an explicit deny", func(q queue) string {
			return `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"},{"Sid":"no","Effect":"Deny","Principal":{"AWS":"*"},"Action":"sqs:SendMessage","Resource":"` + q.ARN + `"}]}`
		}, false},
		{"an account principal", func(q queue) string {
			return `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:root"},"Action":"sqs:SendMessage","Resource":"` + q.ARN + `"}]}`
		}, false},
		{"a condition SNS cannot satisfy", func(q queue) string {
			return `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"` + q.ARN + `","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`
		}, false},
	} {
		q := e.queue(t, "q", nil)
		if p := tc.policy(q); p != "" {
			setPolicy(q, p)
		}
		sub := e.subscribe(t, topic, q, nil)
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(tc.what)})
		got := len(e.drain(t, q))
		c := e.subStats(t, sub)
		if tc.deliver && (got != 1 || c.Delivered != 1) || !tc.deliver && (got != 0 || c.Failed != 1) {
			t.Errorf("%s: %d messages, counts %+v", tc.what, got, c)
		}
	}
}

// A raw publish to several queues stores its body once for all of them
// (sqs.SharedBody): each queue still answers it whole, with the MD5 the SDK
// checks, an id of its own and its attributes, and deleting it from one
// queue, or purging another, leaves the rest.
func TestRawDeliveryToSeveralQueuesKeepsEachCopyWhole(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	var raws []queue
	for k := range 3 {
		q := e.queue(t, fmt.Sprint("raw", k), nil)
		e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
		raws = append(raws, q)
	}
	filtered := e.queue(t, "filtered", nil)
	e.subscribe(t, topic, filtered, map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"n":[{"numeric":["<",10]}]}`})
	enveloped := e.queue(t, "enveloped", nil)
	e.subscribe(t, topic, enveloped, nil)

	var sent []string
	for k := range 20 {
		body := fmt.Sprintf("%d:", k) + strings.Repeat("é-ü ", 30+k*k*300) // 182 bytes (too small to share) to 200 kB
		body = body[:min(len(body), 200_000)]
		sent = append(sent, body)
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body),
			MessageAttributes: map[string]types.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String(fmt.Sprint(k))}}})
	}
	check := func(what string, q queue, want []string, enveloped bool) []sqstypes.Message {
		t.Helper()
		msgs := e.drain(t, q)
		got := bodies(t, msgs, enveloped)
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("%s: %d bodies, want %d (or other bytes)", what, len(got), len(w))
		}
		for _, m := range msgs {
			if !enveloped && aws.ToString(m.MessageAttributes["n"].StringValue) == "" {
				t.Fatalf("%s: a message lost its attributes", what)
			}
		}
		return msgs
	}
	ids := map[string]bool{}
	for _, m := range check("first raw queue", raws[0], sent, false) {
		ids[aws.ToString(m.MessageId)] = true
		if _, err := e.sqs.DeleteMessage(ctx(t), &sqs.DeleteMessageInput{QueueUrl: aws.String(raws[0].URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.sqs.PurgeQueue(ctx(t), &sqs.PurgeQueueInput{QueueUrl: aws.String(raws[1].URL)}); err != nil {
		t.Fatal(err)
	}
	for _, m := range check("third raw queue", raws[2], sent, false) {
		if ids[aws.ToString(m.MessageId)] {
			t.Fatal("two queues gave one message the same MessageId")
		}
	}
	check("filtered queue", filtered, sent[:10], false)
	check("enveloped queue", enveloped, sent, true)
	if msgs := e.drain(t, raws[1]); len(msgs) != 0 {
		t.Fatalf("the purged queue holds %d", len(msgs))
	}
}
