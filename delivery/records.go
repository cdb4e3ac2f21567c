package delivery

import (
	"strings"
	"sync"
	"time"

	"github.com/fanout/fanout/filter"
	"github.com/fanout/fanout/retrypolicy"
)

// Delivery statuses, as GET /_fanout/deliveries shows them.
const (
	StatusPending      = "pending"       // the first attempt has not finished
	StatusRetrying     = "retrying"      // an attempt failed; the next one is scheduled
	StatusDelivered    = "delivered"     // an attempt succeeded
	StatusDeadLettered = "dead-lettered" // given up, and sent to the subscription's DLQ
	StatusDropped      = "dropped"       // given up, with no DLQ (or the DLQ refused it)
	StatusFiltered     = "filtered-out"  // the subscription's filter policy refused the message
)

// Statuses lists every status a record can have.
var Statuses = []string{StatusPending, StatusRetrying, StatusDelivered, StatusDeadLettered, StatusDropped, StatusFiltered}

// Attempt outcomes.
const (
	OutcomeDelivered = "delivered"
	OutcomeFailed    = "failed"   // a server-side error: retried while the policy allows
	OutcomeRejected  = "rejected" // a client-side error: never retried
)

// Defaults for what the dispatcher remembers.
const (
	// DefaultKeepRecords is how many deliveries Records lists, newest first.
	DefaultKeepRecords = 10000
	// DefaultRecordBytes is the byte budget of the message bodies and
	// attributes that the delivery records and the outbox keep, together.
	DefaultRecordBytes = 64 << 20
	// maxEntryBody caps one kept body; longer ones are kept truncated.
	maxEntryBody = 64 << 10
	// keptAttempts is how many attempts a record lists: the most recent.
	// AttemptCount counts them all (an SQS or Lambda schedule has 100,015).
	keptAttempts = 100
)

// Record is one message's delivery to one subscription: every attempt, on
// fanout's clock. A message a subscription's filter policy refused has a
// record too (StatusFiltered), which says why.
type Record struct {
	MessageID       string     `json:"messageId"`
	Type            string     `json:"type"`
	TopicArn        string     `json:"topicArn"`
	SubscriptionArn string     `json:"subscriptionArn"`
	Protocol        string     `json:"protocol"`
	Endpoint        string     `json:"endpoint"`
	Status          string     `json:"status"`
	Created         time.Time  `json:"created"`
	MaxAttempts     int        `json:"maxAttempts"`
	AttemptCount    int        `json:"attemptCount"`
	NextAttempt     *time.Time `json:"nextAttempt,omitempty"`
	DeadLetterQueue string     `json:"deadLetterQueue,omitempty"`
	// Reason says why a delivery was dead-lettered or dropped.
	Reason   string    `json:"reason,omitempty"`
	Attempts []Attempt `json:"attempts"`
	// FilterPolicy, FilterScope and Filter are set on filtered-out records:
	// the policy that refused the message, and how each of its keys fared.
	FilterPolicy string              `json:"filterPolicy,omitempty"`
	FilterScope  string              `json:"filterScope,omitempty"`
	Filter       *filter.Explanation `json:"filter,omitempty"`

	kept  *keptMessage // the message as the records keep it
	first [1]Attempt   // room for the first attempt, allocated with the record
	// explain computes Filter when the record is read: explaining costs
	// more than matching, and most records are never looked at.
	explain func() filter.Explanation
}

// Attempt is one delivery attempt.
type Attempt struct {
	Number  int       `json:"number"`
	Time    time.Time `json:"time"`
	Outcome string    `json:"outcome"`
	// HTTPStatus is the endpoint's answer (http, https, lambda), 0 if none.
	HTTPStatus  int        `json:"httpStatus,omitempty"`
	Error       string     `json:"error,omitempty"`
	NextAttempt *time.Time `json:"nextAttempt,omitempty"`
}

// Query selects records; empty fields match everything.
type Query struct {
	SubscriptionArn string
	TopicArn        string
	Status          string
	Type            string // Notification, SubscriptionConfirmation or UnsubscribeConfirmation
	MessageID       string
	// Account and Region, when set, keep the records of the topics of
	// that account and region (each topic ARN names both).
	Account, Region string
	Limit           int // 0: all that are kept
	// After is the Next of the previous page: the page starts after it.
	After string
}

func (q Query) match(r *Record) bool {
	return (q.SubscriptionArn == "" || q.SubscriptionArn == r.SubscriptionArn) &&
		(q.TopicArn == "" || q.TopicArn == r.TopicArn) &&
		(q.Status == "" || q.Status == r.Status) &&
		(q.Type == "" || q.Type == r.Type) &&
		(q.MessageID == "" || q.MessageID == r.MessageID) &&
		InNamespace(r.TopicArn, q.Account, q.Region)
}

// InNamespace reports whether an ARN is of account and region; an empty
// account or region matches any.
func InNamespace(arn, account, region string) bool {
	if account == "" && region == "" {
		return true
	}
	p := strings.SplitN(arn, ":", 6)
	return len(p) == 6 && (account == "" || p[4] == account) && (region == "" || p[3] == region)
}

// Page is one page of records, newest first.
type Page struct {
	Records []Record
	// Next continues the listing (Query.After); "" on the last page.
	Next string
	// Dropped counts the records that fell out of memory since the start
	// (the oldest go first, past the count or the byte budget kept).
	Dropped int64
}

// records keeps the last n deliveries, and the messages they are for
// within a byte budget (a message counts once, however many records share
// it). One mutex guards them and every record kept: attempts are rare next
// to the work they record.
type records struct {
	mu   sync.Mutex
	kept ring[slot]
}

// slot is one kept delivery: a Record, or, for a delivery to a queue that
// succeeded at its first attempt (the bulk of them, never retried) and for
// a message a filter policy refused, the few facts that make its Record,
// which is built when it is read. So a publish to many queues, or to a
// topic with many filtered subscriptions, allocates no Record per
// subscription.
type slot struct {
	r *Record // nil for a delivered or filtered-out one:
	k *keptMessage
	// sub is the subscription's counts, for its ARN, protocol and endpoint.
	sub *SubscriptionCounts
	at  time.Time // the attempt's time, or when the filter refused it
	// policy is set on a filtered-out slot: the policy that refused the
	// message. attrs are the attributes it was matched against (the
	// publish's, shared by every subscription); a body-scope policy was
	// matched against the kept body.
	policy *filter.Policy
	attrs  map[string]filter.Attribute
}

// message is the slot's kept message, nil if none.
func (s slot) message() *keptMessage {
	if s.r != nil {
		return s.r.kept
	}
	return s.k
}

// lean is the Record of a delivered or filtered-out slot, but its
// Attempts (see attempts).
func (s slot) lean() Record {
	if p := s.policy; p != nil {
		r := Record{
			MessageID: s.k.view.MessageID, Type: TypeNotification, TopicArn: s.k.view.TopicArn,
			SubscriptionArn: s.sub.SubscriptionArn, Protocol: s.sub.Protocol, Endpoint: s.sub.Endpoint,
			Status: StatusFiltered, Created: s.at, FilterPolicy: p.String(), FilterScope: string(p.Scope()), kept: s.k,
		}
		if p.Scope() == filter.ScopeBody {
			body := s.k.view.Body
			r.explain = func() filter.Explanation { return p.Explain(filter.Message{Body: body}) }
		} else {
			attrs := s.attrs
			r.explain = func() filter.Explanation { return p.Explain(filter.Message{Attributes: attrs}) }
		}
		return r
	}
	return Record{
		MessageID: s.k.view.MessageID, Type: TypeNotification, TopicArn: s.k.view.TopicArn,
		SubscriptionArn: s.sub.SubscriptionArn, Protocol: s.sub.Protocol, Endpoint: s.sub.Endpoint,
		Status: StatusDelivered, Created: s.at, MaxAttempts: queueAttempts, AttemptCount: 1, kept: s.k,
	}
}

// attempts is the Attempts of a lean slot: the one that delivered, or
// none (nil, as copyRecord copies a filtered-out Record's) for a
// filtered-out one.
func (s slot) attempts() []Attempt {
	if s.policy != nil {
		return nil
	}
	return []Attempt{{Number: 1, Time: s.at, Outcome: OutcomeDelivered}}
}

// queueAttempts is the MaxAttempts of a delivery to a queue: SNS's
// AWS-managed policy (a failed send to a queue is not retried, though).
var queueAttempts = retrypolicy.Default("sqs").Attempts()

func newRecords(n int, budget int64) *records {
	if n <= 0 {
		n = DefaultKeepRecords
	}
	if budget <= 0 {
		budget = DefaultRecordBytes / 2
	}
	return &records{kept: newRing(n, budget, func(s slot) int64 {
		if k := s.message(); k != nil {
			if k.refs--; k.refs == 0 {
				return k.size
			}
		}
		return 0
	})}
}

// add keeps a record, forgetting the oldest past the count or the budget. A
// record that falls out stays with its job until the job ends; it is just no
// longer listed.
func (rs *records) add(r *Record) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.push(slot{r: r})
}

// delivered keeps the record of a delivery to a queue that its first
// attempt, at at, made, unless the dispatcher was reset since gen.
func (rs *records) delivered(d *Dispatcher, gen uint64, k *keptMessage, sub *SubscriptionCounts, at time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if d.generation.Load() == gen { // Reset replaces the ring under mu
		rs.push(slot{k: k, sub: sub, at: at})
	}
}

func (rs *records) push(s slot) {
	var cost int64
	if k := s.message(); k != nil {
		if k.refs == 0 {
			cost = k.size
		}
		k.refs++
	}
	rs.kept.push(s, cost)
}

// attempt appends a to r and sets its status.
func (rs *records) attempt(r *Record, a Attempt, status string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r.AttemptCount++
	if len(r.Attempts) == keptAttempts {
		copy(r.Attempts, r.Attempts[1:])
		r.Attempts = r.Attempts[:keptAttempts-1]
	}
	r.Attempts = append(r.Attempts, a)
	r.Status = status
	r.NextAttempt = a.NextAttempt
}

// end sets a record's final status.
func (rs *records) end(r *Record, status, dlq, reason string) {
	rs.mu.Lock()
	r.Status, r.DeadLetterQueue, r.Reason, r.NextAttempt = status, dlq, reason, nil
	rs.mu.Unlock()
}

// reschedule moves a record's next attempt (a throttle slot).
func (rs *records) reschedule(r *Record, at time.Time) {
	rs.mu.Lock()
	r.NextAttempt = &at
	rs.mu.Unlock()
}

// page returns copies of the matching records, newest first, from after q.After.
func (rs *records) page(q Query) Page {
	out := []Record{}
	rs.mu.Lock()
	next := rs.kept.newest(q.After, func(s slot) bool {
		r := s.r
		var lean Record
		if r == nil {
			lean = s.lean()
			r = &lean
		}
		if q.match(r) {
			c := copyRecord(r)
			if s.r == nil {
				c.Attempts = s.attempts()
			}
			out = append(out, c)
		}
		return q.Limit <= 0 || len(out) < q.Limit
	})
	p := Page{Records: out, Next: next, Dropped: rs.kept.dropped}
	rs.mu.Unlock()
	for i := range out {
		out[i].explainNow()
	}
	return p
}

// copyRecord copies what later attempts change. Callers hold mu.
func copyRecord(r *Record) Record {
	c := *r
	c.Attempts = append([]Attempt(nil), r.Attempts...)
	if r.NextAttempt != nil {
		t := *r.NextAttempt
		c.NextAttempt = &t
	}
	return c
}

// explainNow fills Filter on a copy.
func (r *Record) explainNow() {
	if r.explain != nil && r.Filter == nil {
		ex := r.explain()
		r.Filter = &ex
	}
}

// message returns the kept message of that id, if a record still holds it.
func (rs *records) message(id string) (v MessageView, found bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.kept.newest("", func(s slot) bool {
		if k := s.message(); k != nil && k.view.MessageID == id {
			v, found = k.view, true
		}
		return !found
	})
	return v, found
}

// Records lists the deliveries the dispatcher remembers that match q,
// newest first.
func (d *Dispatcher) Records(q Query) []Record { return d.records.page(q).Records }

// RecordPage lists one page of the deliveries that match q, newest first.
func (d *Dispatcher) RecordPage(q Query) Page { return d.records.page(q) }

// Deliveries returns what became of one published message at each
// subscription of its topic: delivered, pending, retrying, dead-lettered,
// dropped or filtered out (with the filter policy's explanation), in the
// order the subscriptions were tried. It is empty once the records of the
// message fell out of memory.
func (d *Dispatcher) Deliveries(messageID string) []Record {
	recs := d.records.page(Query{MessageID: messageID}).Records
	for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
		recs[i], recs[j] = recs[j], recs[i]
	}
	return recs
}

// Message returns a published message as the delivery records keep it (the
// body truncated past a cap), while a record of it is kept.
func (d *Dispatcher) Message(messageID string) (MessageView, bool) {
	return d.records.message(messageID)
}
