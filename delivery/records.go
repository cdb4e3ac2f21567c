package delivery

import (
	"sync"
	"time"
)

// Delivery statuses, as GET /_fanout/deliveries shows them.
const (
	StatusPending      = "pending"       // the first attempt has not finished
	StatusRetrying     = "retrying"      // an attempt failed; the next one is scheduled
	StatusDelivered    = "delivered"     // an attempt succeeded
	StatusDeadLettered = "dead-lettered" // given up, and sent to the subscription's DLQ
	StatusDropped      = "dropped"       // given up, with no DLQ (or the DLQ refused it)
)

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
	// keptAttempts is how many attempts a record lists: the most recent.
	// AttemptCount counts them all (an SQS or Lambda schedule has 100,015).
	keptAttempts = 100
)

// Record is one message's delivery to one subscription: every attempt, on
// fanout's clock.
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
	Limit           int // 0: all that are kept
}

func (q Query) match(r *Record) bool {
	return (q.SubscriptionArn == "" || q.SubscriptionArn == r.SubscriptionArn) &&
		(q.TopicArn == "" || q.TopicArn == r.TopicArn) &&
		(q.Status == "" || q.Status == r.Status) &&
		(q.Type == "" || q.Type == r.Type) &&
		(q.MessageID == "" || q.MessageID == r.MessageID)
}

// records keeps the last n deliveries in a ring. One mutex guards the ring
// and every record in it: attempts are rare next to the work they record.
type records struct {
	mu   sync.Mutex
	kept ring[*Record]
}

func newRecords(n int) *records {
	if n <= 0 {
		n = DefaultKeepRecords
	}
	return &records{kept: newRing[*Record](n)}
}

// add starts a record. A record that falls out of the ring stays with its
// job until the job ends; it is just no longer listed.
func (rs *records) add(r *Record) {
	rs.mu.Lock()
	rs.kept.push(r)
	rs.mu.Unlock()
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

// list returns copies of the matching records, newest first.
func (rs *records) list(q Query) []Record {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := []Record{}
	rs.kept.newest(func(r *Record) bool {
		if q.match(r) {
			c := *r
			c.Attempts = append([]Attempt(nil), r.Attempts...)
			if r.NextAttempt != nil {
				t := *r.NextAttempt
				c.NextAttempt = &t
			}
			out = append(out, c)
		}
		return q.Limit <= 0 || len(out) < q.Limit
	})
	return out
}

// Records lists the deliveries the dispatcher remembers that match q,
// newest first.
func (d *Dispatcher) Records(q Query) []Record { return d.records.list(q) }
