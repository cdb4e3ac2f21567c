package delivery

import (
	"sync"
	"time"
)

// OutboxEntry is what an endpoint fanout cannot reach would have received:
// an email, an SMS, a mobile push or a Firehose record.
type OutboxEntry struct {
	Time            time.Time `json:"time"`
	Protocol        string    `json:"protocol"`
	Endpoint        string    `json:"endpoint"`
	SubscriptionArn string    `json:"subscriptionArn"`
	TopicArn        string    `json:"topicArn"`
	MessageID       string    `json:"messageId"`
	Type            string    `json:"type"`
	// Email only: the headers a mail client shows.
	From    string `json:"from,omitempty"`
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body"`
}

// OutboxQuery selects outbox entries; empty fields match everything.
type OutboxQuery struct {
	Protocol string
	Endpoint string
	Limit    int
}

// outbox keeps the last n entries.
type outbox struct {
	mu      sync.Mutex
	entries ring[OutboxEntry]
}

func newOutbox(n int) *outbox {
	if n <= 0 {
		n = DefaultKeepRecords
	}
	return &outbox{entries: newRing[OutboxEntry](n)}
}

func (o *outbox) add(e OutboxEntry) {
	o.mu.Lock()
	o.entries.push(e)
	o.mu.Unlock()
}

func (o *outbox) list(q OutboxQuery) []OutboxEntry {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := []OutboxEntry{}
	o.entries.newest(func(e OutboxEntry) bool {
		if (q.Protocol == "" || q.Protocol == e.Protocol) && (q.Endpoint == "" || q.Endpoint == e.Endpoint) {
			out = append(out, e)
		}
		return q.Limit <= 0 || len(out) < q.Limit
	})
	return out
}

// Outbox lists what email, email-json, sms, application and firehose
// endpoints received, newest first.
func (d *Dispatcher) Outbox(q OutboxQuery) []OutboxEntry { return d.outbox.list(q) }
