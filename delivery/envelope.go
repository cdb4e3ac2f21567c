package delivery

import (
	"encoding/base64"
	"strings"
)

// TimeFormat is how SNS writes Timestamp: UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Links builds the URLs SNS puts in messages. Base returns the endpoint's
// base URL (scheme and host, no trailing slash), read at each delivery so a
// server can learn its address after it was built.
type Links struct {
	Base func() string
	// CertFile returns the certificate's file name (SimpleNotificationService-<hex>.pem).
	CertFile func() (string, error)
}

// PathPrefix is where fanout serves what SNS links to: the signing
// certificate, and the Query-style Unsubscribe and ConfirmSubscription URLs.
const PathPrefix = "/_fanout/sns/"

// CertURL returns the SigningCertURL.
func (l Links) CertURL() (string, error) {
	name, err := l.CertFile()
	if err != nil {
		return "", err
	}
	return l.Base() + PathPrefix + name, nil
}

// UnsubscribeURL returns the URL that unsubscribes subscriptionArn when
// visited, in AWS's query shape.
func (l Links) UnsubscribeURL(subscriptionArn string) string {
	return l.Base() + PathPrefix + "?Action=Unsubscribe&SubscriptionArn=" + subscriptionArn
}

// StringToSign builds the text SNS signs for a Notification: each of
// Message, MessageId, Subject (when present), Timestamp, TopicArn and Type
// as "name\nvalue\n", in that order.
// https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
func StringToSign(message, messageID, subject, timestamp, topicArn string) string {
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
	field("Timestamp", timestamp)
	field("TopicArn", topicArn)
	field("Type", TypeNotification)
	return b.String()
}

// fields writes a JSON object the way SNS lays out its envelopes: two-space
// indent and "key" : value, one member a line.
type fields struct {
	b     strings.Builder
	first bool
}

func newFields(size int) *fields {
	f := &fields{first: true}
	f.b.Grow(size + 1024)
	return f
}

func (f *fields) key(k string) {
	if f.first {
		f.b.WriteString("{\n  ")
		f.first = false
	} else {
		f.b.WriteString(",\n  ")
	}
	writeJSONString(&f.b, k)
	f.b.WriteString(" : ")
}

func (f *fields) str(k, v string) {
	f.key(k)
	writeJSONString(&f.b, v)
}

func (f *fields) close() string {
	f.b.WriteString("\n}")
	return f.b.String()
}

// envelope renders the JSON document SNS delivers for a non-raw
// subscription, with AWS's field order and layout (two-space indent,
// "key" : value, attributes one per line). FIFO topics carry SequenceNumber
// and are not signed.
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
func (d *Dispatcher) envelope(m *Message, sub Subscriber) (string, error) {
	text := m.For(sub.Protocol)
	ts := m.Timestamp.UTC().Format(TimeFormat)
	f := newFields(len(text))
	f.str("Type", TypeNotification)
	f.str("MessageId", m.ID)
	if m.Fifo {
		f.str("SequenceNumber", m.SequenceNumber)
	}
	f.str("TopicArn", m.TopicArn)
	if m.Subject != "" {
		f.str("Subject", m.Subject)
	}
	f.str("Message", text)
	f.str("Timestamp", ts)
	if !m.Fifo {
		sig, cert, err := d.sign(m, text)
		if err != nil {
			return "", err
		}
		f.str("SignatureVersion", m.SignatureVersion)
		f.str("Signature", sig)
		f.str("SigningCertURL", cert)
	}
	f.str("UnsubscribeURL", d.opts.Links.UnsubscribeURL(sub.Arn))
	if len(m.Attributes) > 0 {
		f.key("MessageAttributes")
		f.b.WriteString("{")
		for i, a := range m.Attributes {
			if i > 0 {
				f.b.WriteByte(',')
			}
			f.b.WriteString("\n    ")
			writeJSONString(&f.b, a.Name)
			f.b.WriteString(` : {"Type":`)
			writeJSONString(&f.b, a.DataType)
			f.b.WriteString(`,"Value":`)
			writeJSONString(&f.b, attributeText(a))
			f.b.WriteByte('}')
		}
		f.b.WriteString("\n  }")
	}
	if m.Replayed {
		// Replayed copies say so (the exact placement is not documented).
		f.key("Replayed")
		f.b.WriteString("true")
	}
	return f.close(), nil
}

// sign returns the signature of a notification whose message text is text
// (cached on the message: every subscriber of one protocol shares it) and
// the SigningCertURL.
func (d *Dispatcher) sign(m *Message, text string) (sig, certURL string, err error) {
	ts := m.Timestamp.UTC().Format(TimeFormat)
	sig, err = m.signature(StringToSign(text, m.ID, m.Subject, ts, m.TopicArn), func(s string) (string, error) {
		return d.opts.Signer.Sign(m.SignatureVersion, s)
	})
	if err != nil {
		return "", "", err
	}
	certURL, err = d.opts.Links.CertURL()
	return sig, certURL, err
}

// attributeText is an attribute's value as the envelope shows it: Binary in
// base64, everything else as the string published.
func attributeText(a Attribute) string {
	if strings.HasPrefix(a.DataType, "Binary") {
		return base64.StdEncoding.EncodeToString(a.BinaryValue)
	}
	return a.StringValue
}

// writeJSONString writes s as a JSON string the way SNS's serializer does:
// quote, backslash and control characters escaped, everything else (slash,
// HTML characters, non-ASCII) as is.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[last:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
		last = i + 1
	}
	b.WriteString(s[last:])
	b.WriteByte('"')
}
