package delivery

import (
	"github.com/fanout/fanout/sqs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/retrypolicy"
)

// Attribute is an SNS message attribute as published.
type Attribute struct {
	Name        string
	DataType    string // String, String.Array, Number or Binary, maybe with a custom suffix
	StringValue string
	BinaryValue []byte
}

// Message is one published notification, shared by every subscription it
// goes to. It is immutable once handed to Deliver, except for the signature
// cache, which has its own lock.
type Message struct {
	ID        string
	TopicArn  string
	Subject   string // "" when not published with one
	Timestamp time.Time
	// Body is the message for every protocol; with MessageStructure=json,
	// PerProtocol overrides it for the protocols it names.
	Body        string
	PerProtocol map[string]string
	Attributes  []Attribute // in the order published
	// FIFO topics: the ids SNS forwards to FIFO queues, and the topic's
	// sequence number. DedupID is the computed SHA-256 when the topic uses
	// content-based deduplication.
	Fifo           bool
	GroupID        string
	DedupID        string
	SequenceNumber string
	// SignatureVersion is the topic's: "1" (SHA1withRSA) or "2" (SHA256withRSA).
	SignatureVersion string
	// Replayed marks a copy re-delivered from a FIFO topic's archive.
	Replayed bool
	// DisplayName is the topic's DisplayName when published: email and SMS
	// deliveries show it as the sender.
	DisplayName string

	// BodyChecked says Body holds only the characters SQS accepts in a
	// message body (fanout's SNS checks a published message with that
	// rule): its raw deliveries to queues skip SQS's own scan of it. Not
	// stored with a pending delivery: a restored one is checked again.
	BodyChecked bool `json:"-"`

	mu         sync.Mutex
	signatures map[string]string // string to sign -> signature
	// The MD5 of the raw payload, computed once for all queues: written
	// under mu before md5Set, read without the lock after it. md5s holds
	// those of other payloads (MessageStructure=json gives one per protocol).
	md5Text, md5Sum string
	md5Set          atomic.Bool
	md5s            map[string]string
	// kept is the records' view of it, made once (under mu) and read
	// without the lock.
	kept atomic.Pointer[keptMessage]
}

// md5Of returns the MD5 SQS reports for a raw payload of this message,
// computing it once however many queues receive it.
func (m *Message) md5Of(text string) string {
	if m.md5Set.Load() && m.md5Text == text {
		return m.md5Sum
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.md5Set.Load() && m.md5Text == text {
		return m.md5Sum
	}
	if sum, ok := m.md5s[text]; ok {
		return sum
	}
	sum := sqs.MD5OfBody(text)
	if !m.md5Set.Load() {
		m.md5Text, m.md5Sum = text, sum
		m.md5Set.Store(true)
		return sum
	}
	if m.md5s == nil {
		m.md5s = map[string]string{}
	}
	m.md5s[text] = sum
	return sum
}

// For returns the text a subscription of protocol receives.
func (m *Message) For(protocol string) string {
	if s, ok := m.PerProtocol[protocol]; ok {
		return s
	}
	return m.Body
}

// AsReplay returns a copy of m marked Replayed, as SNS re-delivers archived
// messages: same id, content and timestamp.
// https://docs.aws.amazon.com/sns/latest/dg/message-archiving-and-replay-subscriber.html
func (m *Message) AsReplay() *Message {
	return &Message{
		ID: m.ID, TopicArn: m.TopicArn, Subject: m.Subject, Timestamp: m.Timestamp,
		Body: m.Body, PerProtocol: m.PerProtocol, Attributes: m.Attributes,
		Fifo: m.Fifo, GroupID: m.GroupID, DedupID: m.DedupID, SequenceNumber: m.SequenceNumber,
		SignatureVersion: m.SignatureVersion, Replayed: true, DisplayName: m.DisplayName,
		BodyChecked: m.BodyChecked,
	}
}

// signature returns the cached signature of text, computing it with sign the
// first time: every subscriber of one protocol gets the same string to sign.
func (m *Message) signature(text string, sign func(string) (string, error)) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.signatures[text]; ok {
		return s, nil
	}
	s, err := sign(text)
	if err != nil {
		return "", err
	}
	if m.signatures == nil {
		m.signatures = map[string]string{}
	}
	m.signatures[text] = s
	return s, nil
}

// Subscriber is where a message goes: one subscription, as delivery needs it.
type Subscriber struct {
	Arn      string
	Protocol string
	Endpoint string
	Raw      bool // RawMessageDelivery
	// Policy is the delivery policy in force (retrypolicy.Resolve); nil
	// means AWS's default for the protocol.
	Policy *retrypolicy.Policy
	// DeadLetterArn is the SQS queue of the subscription's RedrivePolicy,
	// "" when it has none.
	DeadLetterArn string
	// Gone, when set, reports whether the subscription has been deleted
	// since: a notification still waiting for a retry is then dropped.
	Gone func() bool
	// Tally, when set, is where the dispatcher finds this subscription's
	// counts without looking its ARN up; keep one per subscription.
	Tally *Tally
}

// policy returns the delivery policy in force for the subscriber.
func (s Subscriber) policy() retrypolicy.Policy {
	if s.Policy != nil {
		return *s.Policy
	}
	return retrypolicy.Default(s.Protocol)
}
