package delivery

import (
	"sync"
	"time"
)

// OutboxEntry is what an endpoint fanout cannot reach would have received:
// an email, an SMS, a mobile push or a Firehose record. A body longer than
// the per-entry cap is kept truncated: BodyTruncated says so and BodySize is
// the length it had.
type OutboxEntry struct {
	Time            time.Time `json:"time"`
	Protocol        string    `json:"protocol"`
	Endpoint        string    `json:"endpoint"`
	SubscriptionArn string    `json:"subscriptionArn"`
	TopicArn        string    `json:"topicArn"`
	MessageID       string    `json:"messageId"`
	Type            string    `json:"type"`
	// Email only: the headers a mail client shows.
	From          string `json:"from,omitempty"`
	Subject       string `json:"subject,omitempty"`
	Body          string `json:"body"`
	BodySize      int    `json:"bodySize"`
	BodyTruncated bool   `json:"bodyTruncated,omitempty"`
}

// OutboxQuery selects outbox entries; empty fields match everything.
type OutboxQuery struct {
	Protocol string
	Endpoint string
	// Account and Region, when set, keep the entries of topics of that
	// account and region.
	Account, Region string
	Limit           int
	// After is the Next of the previous page: the page starts after it.
	After string
}

// OutboxPage is one page of the outbox, newest first.
type OutboxPage struct {
	Entries []OutboxEntry
	// Next continues the listing (OutboxQuery.After); "" on the last page.
	Next string
	// Dropped counts the entries forgotten since the start (past the count
	// or the byte budget kept).
	Dropped int64
}

// outbox keeps the last n entries within a byte budget.
type outbox struct {
	mu      sync.Mutex
	cap     int // longest body kept
	entries ring[OutboxEntry]
}

func newOutbox(n int, budget int64, entryCap int) *outbox {
	if n <= 0 {
		n = DefaultKeepRecords
	}
	return &outbox{cap: entryCap, entries: newRing(n, budget, outboxCost)}
}

func outboxCost(e OutboxEntry) int64 {
	return int64(len(e.Body) + len(e.Subject) + len(e.Endpoint) + recordOverhead)
}

func (o *outbox) add(e OutboxEntry) {
	e.BodySize = len(e.Body)
	e.Body, e.BodyTruncated = truncate(e.Body, o.cap)
	o.mu.Lock()
	o.entries.push(e, outboxCost(e))
	o.mu.Unlock()
}

func (o *outbox) page(q OutboxQuery) OutboxPage {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := []OutboxEntry{}
	next := o.entries.newest(q.After, func(e OutboxEntry) bool {
		if (q.Protocol == "" || q.Protocol == e.Protocol) && (q.Endpoint == "" || q.Endpoint == e.Endpoint) && InNamespace(e.TopicArn, q.Account, q.Region) {
			out = append(out, e)
		}
		return q.Limit <= 0 || len(out) < q.Limit
	})
	return OutboxPage{Entries: out, Next: next, Dropped: o.entries.dropped}
}

// Outbox lists what email, email-json, sms, application and firehose
// endpoints received, newest first.
func (d *Dispatcher) Outbox(q OutboxQuery) []OutboxEntry { return d.outbox.page(q).Entries }

// OutboxPage lists one page of the outbox, newest first.
func (d *Dispatcher) OutboxPage(q OutboxQuery) OutboxPage { return d.outbox.page(q) }
