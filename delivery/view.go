package delivery

import (
	"strings"
	"time"

	"github.com/fanout/fanout/filter"
)

// MessageView is a published message as the delivery records show it. A
// body longer than the per-entry cap is kept truncated: BodyTruncated says
// so and BodySize is the length it had.
type MessageView struct {
	MessageID      string          `json:"messageId"`
	TopicArn       string          `json:"topicArn"`
	Subject        string          `json:"subject,omitempty"`
	Timestamp      time.Time       `json:"timestamp"`
	Body           string          `json:"body"`
	BodySize       int             `json:"bodySize"`
	BodyTruncated  bool            `json:"bodyTruncated,omitempty"`
	Attributes     []AttributeView `json:"attributes,omitempty"`
	GroupID        string          `json:"messageGroupId,omitempty"`
	SequenceNumber string          `json:"sequenceNumber,omitempty"`
}

// AttributeView is a message attribute as the records show it; binary
// values are base64 in JSON.
type AttributeView struct {
	Name        string `json:"name"`
	DataType    string `json:"dataType"`
	StringValue string `json:"stringValue,omitempty"`
	BinaryValue []byte `json:"binaryValue,omitempty"`
}

// keptMessage is a message's view and what it costs, shared by the records
// of every subscription it went to; refs counts them (under records.mu).
type keptMessage struct {
	view MessageView
	size int64
	refs int
}

// recordOverhead is what a kept message costs beyond its text.
const recordOverhead = 256

// truncate returns s cut to max bytes (on a rune boundary), copied so that
// the rest can be freed, and whether it was cut.
func truncate(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return strings.Clone(s[:cut]), true
}

// kept returns the message's view for the records, made once per message.
func (d *Dispatcher) kept(m *Message) *keptMessage {
	if k := m.kept.Load(); k != nil {
		return k
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.kept.Load(); k != nil {
		return k
	}
	body, cut := truncate(m.Body, d.entryCap)
	v := MessageView{
		MessageID: m.ID, TopicArn: m.TopicArn, Subject: m.Subject, Timestamp: m.Timestamp,
		Body: body, BodySize: len(m.Body), BodyTruncated: cut, GroupID: m.GroupID, SequenceNumber: m.SequenceNumber,
	}
	size := int64(len(body) + len(m.Subject) + recordOverhead)
	for _, a := range m.Attributes {
		v.Attributes = append(v.Attributes, AttributeView(a))
		size += int64(len(a.Name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue))
	}
	k := &keptMessage{view: v, size: size}
	m.kept.Store(k)
	return k
}

// Filtered records that m did not go to sub because sub's filter policy p
// refused it; fm is what p was matched against. The explanation is worked
// out when the record is read, from what the records keep anyway (a lean
// slot), or now when that is not enough (a body past the cap, or a
// protocol's own body).
func (d *Dispatcher) Filtered(m *Message, sub Subscriber, p *filter.Policy, fm filter.Message) {
	k := d.kept(m)
	if !explainedNow(p, fm, m, k) {
		d.stats.mu.Lock()
		c := d.stats.filteredLocked(sub)
		d.stats.mu.Unlock()
		rs := d.records
		rs.mu.Lock()
		rs.push(slot{k: k, sub: c, at: d.clock.Now(), policy: p, attrs: fm.Attributes})
		rs.mu.Unlock()
		return
	}
	d.stats.filter(sub)
	ex := p.Explain(fm)
	d.records.add(&Record{
		MessageID: m.ID, Type: TypeNotification, TopicArn: m.TopicArn, SubscriptionArn: sub.Arn,
		Protocol: sub.Protocol, Endpoint: sub.Endpoint, Status: StatusFiltered, Created: d.clock.Now(),
		Attempts: []Attempt{}, FilterPolicy: p.String(), FilterScope: string(p.Scope()), kept: k, Filter: &ex,
	})
}

// explainedNow reports whether a filtered-out record must explain itself
// when made: a body-scope policy matched against a body the records do not
// keep whole (past their cap, or a protocol's own body).
func explainedNow(p *filter.Policy, fm filter.Message, m *Message, k *keptMessage) bool {
	return p.Scope() == filter.ScopeBody && (k.view.BodyTruncated || fm.Body != m.Body)
}
