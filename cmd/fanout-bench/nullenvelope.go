package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A subscription without RawMessageDelivery receives a JSON envelope signed
// with RSA-2048, as AWS signs it. A correct server cannot answer such a
// publish without that signature, so the null server makes it too: once a
// publish, whatever the number of subscriptions (the signed text holds
// nothing of the subscription), and throws it away. Receives from such
// queues answer canned envelopes, as long as a real one, so the client
// parses as much as from fanout.
//
// This is the least a correct reply allows. Without it the null server's
// enveloped figure would be a ceiling no faithful server can approach: the
// signature is most of the CPU of an enveloped publish.

// envelopeKeyBits is the size of AWS's SNS signing keys.
const envelopeKeyBits = 2048

// nullEnvelopes is what the null server keeps to answer enveloped
// subscriptions: its key, the topics that sign and the queues that receive
// envelopes. It stores no message.
type nullEnvelopes struct {
	once   sync.Once
	key    *rsa.PrivateKey
	keyErr error

	topics sync.Map // topic ARN → struct{}: has a subscription without raw delivery
	queues sync.Map // queue name → struct{}: receives envelopes
	canned []sizedReceives
}

func newNullEnvelopes(sizes []int) *nullEnvelopes {
	e := &nullEnvelopes{canned: make([]sizedReceives, len(sizes))}
	for i, n := range sizes {
		e.canned[i] = sizedReceives{tag: "-" + strconv.Itoa(n) + "B", replies: cannedReceivesOf(cannedEnvelope(n))}
	}
	return e
}

// loadKey makes the signing key when the first enveloped subscription is
// made (set-up, not timed).
func (e *nullEnvelopes) loadKey() error {
	e.once.Do(func() { e.key, e.keyErr = rsa.GenerateKey(rand.Reader, envelopeKeyBits) })
	return e.keyErr
}

// subscribe notes a subscription: unless its attributes ask for raw
// delivery, its topic signs and, for an SQS endpoint, its queue receives
// envelopes.
func (e *nullEnvelopes) subscribe(f formValues) error {
	for n := 1; ; n++ {
		k, ok := f["Attributes.entry."+strconv.Itoa(n)+".key"]
		if !ok {
			break
		}
		if k == "RawMessageDelivery" && strings.EqualFold(f["Attributes.entry."+strconv.Itoa(n)+".value"], "true") {
			return nil
		}
	}
	if err := e.loadKey(); err != nil {
		return err
	}
	e.topics.Store(f.get("TopicArn"), struct{}{})
	if f.get("Protocol") == "sqs" {
		arn := f.get("Endpoint")
		e.queues.Store(arn[strings.LastIndexByte(arn, ':')+1:], struct{}{})
	}
	return nil
}

// signs reports whether a publish to topicArn must be signed.
func (e *nullEnvelopes) signs(topicArn string) bool {
	_, ok := e.topics.Load(topicArn)
	return ok
}

// sign signs a Notification as SignatureVersion 1 (SHA1withRSA) does and
// returns the signature in base64.
func (e *nullEnvelopes) sign(message, messageID, subject, topicArn string, now time.Time) (string, error) {
	var b strings.Builder
	field := func(k, v string) {
		b.WriteString(k)
		b.WriteByte('\n')
		b.WriteString(v)
		b.WriteByte('\n')
	}
	field("Message", message)
	field("MessageId", messageID)
	if subject != "" {
		field("Subject", subject)
	}
	field("Timestamp", now.UTC().Format("2006-01-02T15:04:05.000Z"))
	field("TopicArn", topicArn)
	field("Type", "Notification")
	sum := sha1.Sum([]byte(b.String()))
	sig, err := rsa.SignPKCS1v15(rand.Reader, e.key, crypto.SHA1, sum[:])
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// receives returns the canned envelope replies for queueURL, or nil when
// its queue receives raw messages.
func (e *nullEnvelopes) receives(queueURL string) *[11][]byte {
	if _, ok := e.queues.Load(queueURL[strings.LastIndexByte(queueURL, '/')+1:]); !ok {
		return nil
	}
	replies := e.canned[0].replies
	for _, c := range e.canned[1:] {
		if strings.Contains(queueURL, c.tag) {
			replies = c.replies
		}
	}
	return replies
}

// cannedEnvelope is an envelope shaped and sized like fanout's for a
// bodySize-byte message: the same fields, a signature as long as an
// RSA-2048 one, URLs as long as a local server's.
func cannedEnvelope(bodySize int) string {
	sig := base64.StdEncoding.EncodeToString(make([]byte, envelopeKeyBits/8))
	arn := "arn:aws:sns:" + nullRegion + ":" + nullAccount + ":fanout-bench-publish-envelope"
	base := "http://127.0.0.1:4566/_fanout/sns/"
	fields := []struct{ k, v string }{
		{"Type", "Notification"},
		{"MessageId", nullMessageID},
		{"TopicArn", arn},
		{"Message", payload(bodySize)},
		{"Timestamp", "2026-01-01T00:00:00.000Z"},
		{"SignatureVersion", "1"},
		{"Signature", sig},
		{"SigningCertURL", base + "SimpleNotificationService-" + strings.Repeat("0", 32) + ".pem"},
		{"UnsubscribeURL", base + "?Action=Unsubscribe&SubscriptionArn=" + arn + ":" + nullMessageID},
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",\n")
		}
		v, _ := json.Marshal(f.v)
		fmt.Fprintf(&b, "  %q : %s", f.k, v)
	}
	b.WriteString("\n}")
	return b.String()
}
