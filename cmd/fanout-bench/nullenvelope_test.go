package main

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
)

// TestNullEnvelopes drives the null server's enveloped path with the SDK:
// a subscription without RawMessageDelivery makes its topic's publishes
// signed (each gets its own message id) and its queue's receives canned
// envelopes; a raw subscription changes neither.
func TestNullEnvelopes(t *testing.T) {
	srv := newNullServer(t)
	ctx := context.Background()
	c := newSDKClient(srv.URL, newSDKHTTPClient(2))
	publishID := func(topic string) string {
		t.Helper()
		out, err := c.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("hi & <bye> ☃"), Subject: aws.String("s")})
		if err != nil {
			t.Fatalf("Publish: %v", err)
		}
		return aws.ToString(out.MessageId)
	}
	receiveOne := func(q string) string {
		t.Helper()
		msgs, err := c.receiveMessage(ctx, q, 1, 0)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("ReceiveMessage: %v, %d messages", err, len(msgs))
		}
		return msgs[0].body
	}

	rawTopic, _ := c.createTopic(ctx, "raw-topic")
	rawQ, rawARN, _ := c.createQueue(ctx, "raw-q-100B", false)
	if err := c.subscribeQueue(ctx, rawTopic, rawARN); err != nil {
		t.Fatal(err)
	}
	envTopic, _ := c.createTopic(ctx, "env-topic")
	envQ, envARN, _ := c.createQueue(ctx, "env-q-100B", false)
	if err := c.subscribe(ctx, envTopic, "sqs", envARN, map[string]string{"RawMessageDelivery": "false"}); err != nil {
		t.Fatal(err)
	}

	if id := publishID(rawTopic); id != nullMessageID {
		t.Errorf("raw topic's publish id %q: it was signed", id)
	}
	if body := receiveOne(rawQ); body != payload(100) {
		t.Errorf("raw queue received %.80q", body)
	}
	a, b := publishID(envTopic), publishID(envTopic)
	if a == nullMessageID || a == b {
		t.Errorf("enveloped topic's publish ids %q, %q: not signed", a, b)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(receiveOne(envQ)), &env); err != nil {
		t.Fatalf("enveloped queue's body: %v", err)
	}
	if sig, _ := base64.StdEncoding.DecodeString(env["Signature"]); len(sig) != envelopeKeyBits/8 ||
		env["Message"] != payload(100) || env["Type"] != "Notification" || env["SignatureVersion"] != "1" {
		t.Errorf("canned envelope %v", env)
	}
}

// TestNullEnvelopeSignature checks the signature the null server makes is
// SHA1withRSA over SNS's string to sign, so it costs what a real one does.
func TestNullEnvelopeSignature(t *testing.T) {
	e := newNullEnvelopes([]int{64})
	if err := e.loadKey(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	sig, err := e.sign("m", "id", "", "arn:t", now)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(sig)
	sum := sha1.Sum([]byte("Message\nm\nMessageId\nid\nTimestamp\n2026-01-02T03:04:05.006Z\nTopicArn\narn:t\nType\nNotification\n"))
	if err := rsa.VerifyPKCS1v15(&e.key.PublicKey, crypto.SHA1, sum[:], raw); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
}

// TestCannedEnvelopeSize holds the null server's canned envelope to the
// length of fanout's own for the same message, within a tenth, so the client
// parses as much from either.
func TestCannedEnvelopeSize(t *testing.T) {
	ctx := context.Background()
	srv := startFanout(t)
	c := newSDKClient(srv.URL(), newSDKHTTPClient(2))
	for _, size := range []int{64, 1024} {
		name := "fanout-bench-publish-envelope-" + strconv.Itoa(size)
		topic, err := c.createTopic(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		q, arn, err := c.createQueue(ctx, name, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.subscribe(ctx, topic, "sqs", arn, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.publish(ctx, topic, payload(size), nil); err != nil {
			t.Fatal(err)
		}
		msgs, err := c.receiveMessage(ctx, q, 1, 1)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("receive: %v, %d", err, len(msgs))
		}
		got, canned := len(msgs[0].body), len(cannedEnvelope(size))
		t.Logf("%d B: fanout's envelope %d bytes, canned %d", size, got, canned)
		if d := float64(canned-got) / float64(got); d < -0.1 || d > 0.1 {
			t.Errorf("%d B: fanout's envelope %d bytes, canned %d", size, got, canned)
		}
	}
}
