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
	field("Type", "Notification")
	return b.String()
}

// envelope renders the JSON document SNS delivers for a non-raw
// subscription, with AWS's field order and layout (two-space indent,
// "key" : value, attributes one per line). FIFO topics carry SequenceNumber
// and are not signed.
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html
func (d *Dispatcher) envelope(m *Message, sub Subscriber) (string, error) {
	text := m.For(sub.Protocol)
	ts := m.Timestamp.UTC().Format(TimeFormat)
	var b strings.Builder
	b.Grow(len(text) + 1024)
	first := true
	field := func(k, v string) {
		if first {
			b.WriteString("{\n  ")
			first = false
		} else {
			b.WriteString(",\n  ")
		}
		writeJSONString(&b, k)
		b.WriteString(" : ")
		writeJSONString(&b, v)
	}
	field("Type", "Notification")
	field("MessageId", m.ID)
	if m.Fifo {
		field("SequenceNumber", m.SequenceNumber)
	}
	field("TopicArn", m.TopicArn)
	if m.Subject != "" {
		field("Subject", m.Subject)
	}
	field("Message", text)
	field("Timestamp", ts)
	if !m.Fifo {
		sig, err := m.signature(StringToSign(text, m.ID, m.Subject, ts, m.TopicArn), func(s string) (string, error) {
			return d.opts.Signer.Sign(m.SignatureVersion, s)
		})
		if err != nil {
			return "", err
		}
		cert, err := d.opts.Links.CertURL()
		if err != nil {
			return "", err
		}
		field("SignatureVersion", m.SignatureVersion)
		field("Signature", sig)
		field("SigningCertURL", cert)
	}
	field("UnsubscribeURL", d.opts.Links.UnsubscribeURL(sub.Arn))
	if len(m.Attributes) > 0 {
		b.WriteString(",\n  \"MessageAttributes\" : {")
		for i, a := range m.Attributes {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n    ")
			writeJSONString(&b, a.Name)
			b.WriteString(` : {"Type":`)
			writeJSONString(&b, a.DataType)
			b.WriteString(`,"Value":`)
			writeJSONString(&b, attributeText(a))
			b.WriteByte('}')
		}
		b.WriteString("\n  }")
	}
	if m.Replayed {
		// Replayed copies say so (the exact placement is not documented).
		b.WriteString(",\n  \"Replayed\" : true")
	}
	b.WriteString("\n}")
	return b.String(), nil
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
