package delivery

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// recentFailures is how many failed attempts Stats keeps, newest last.
const recentFailures = 100

// Stats is a snapshot of what the dispatcher did, for the admin API.
type Stats struct {
	// Delivered counts deliveries that succeeded, Failed failed attempts.
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	// DeadLettered and Dropped count deliveries given up on: sent to the
	// subscription's dead-letter queue, or discarded.
	DeadLettered int64 `json:"deadLettered"`
	Dropped      int64 `json:"dropped"`
	// NotDelivered counts messages for protocols fanout does not deliver to.
	NotDelivered int64 `json:"notDelivered"`
	// Filtered counts messages filter policies kept from a subscription.
	Filtered int64 `json:"filtered"`
	// Overflowed counts new deliveries refused because their subscription
	// already had its most pending (they are in DeadLettered or Dropped too).
	Overflowed int64 `json:"overflowed"`
	// Scheduled is how many deliveries wait on the clock for their next
	// attempt; Pending how many are queued for an attempt or making one.
	Scheduled     int64                `json:"scheduled"`
	Pending       int64                `json:"pending"`
	Subscriptions []SubscriptionCounts `json:"subscriptions"`
	Failures      []FailureRecord      `json:"recentFailures"`
}

// SubscriptionCounts are one subscription's outcomes.
type SubscriptionCounts struct {
	SubscriptionArn string `json:"subscriptionArn"`
	Protocol        string `json:"protocol"`
	Endpoint        string `json:"endpoint"`
	Delivered       int64  `json:"delivered"`
	Failed          int64  `json:"failed"`
	DeadLettered    int64  `json:"deadLettered"`
	Dropped         int64  `json:"dropped"`
	NotDelivered    int64  `json:"notDelivered"`
	// Filtered counts messages the subscription's filter policy refused.
	Filtered int64 `json:"filtered"`
	// Overflowed counts new deliveries refused because the subscription had
	// its most pending already; Pending is how many it has now (queued,
	// making an attempt, or waiting for a retry).
	Overflowed int64 `json:"overflowed"`
	Pending    int64 `json:"pending"`
}

// FailureRecord is one failed attempt.
type FailureRecord struct {
	Time            time.Time `json:"time"`
	MessageID       string    `json:"messageId"`
	TopicArn        string    `json:"topicArn"`
	SubscriptionArn string    `json:"subscriptionArn"`
	Endpoint        string    `json:"endpoint"`
	Reason          string    `json:"reason"`
	// ClientError is true for failures AWS does not retry (they go
	// straight to a subscription's dead-letter queue).
	ClientError bool `json:"clientError"`
}

type stats struct {
	mu       sync.Mutex
	total    SubscriptionCounts
	subs     map[string]*SubscriptionCounts
	gen      uint64 // bumped by init: tallies of an earlier generation are stale
	failures []FailureRecord
}

// Tally holds a subscription's place in a dispatcher's counts, and the
// queue its SQS endpoint names. A subscription that keeps one and passes it
// in each Subscriber is counted and delivered to without a lookup by ARN:
// with many subscriptions those map lookups touch cold memory on every
// delivery. The zero Tally is ready to use. It serves one dispatcher at a
// time (its lock guards it); one used with another dispatcher, or kept
// across a Reset, falls back to the lookups.
type Tally struct {
	owner  *stats
	counts *SubscriptionCounts // guarded by owner.mu
	gen    uint64
	queue  atomic.Pointer[resolvedQueue]
}

func (s *stats) init() {
	s.subs = map[string]*SubscriptionCounts{}
	s.gen++
}

func (s *stats) sub(sub Subscriber) *SubscriptionCounts {
	t := sub.Tally
	if t != nil && t.owner == s && t.gen == s.gen && t.counts.SubscriptionArn == sub.Arn {
		return t.counts
	}
	c := s.subs[sub.Arn]
	if c == nil {
		c = &SubscriptionCounts{SubscriptionArn: sub.Arn, Protocol: sub.Protocol, Endpoint: sub.Endpoint}
		s.subs[sub.Arn] = c
	}
	if t != nil {
		t.owner, t.counts, t.gen = s, c, s.gen
	}
	return c
}

func (s *stats) count(sub Subscriber, f func(*SubscriptionCounts)) {
	s.mu.Lock()
	f(&s.total)
	f(s.sub(sub))
	s.mu.Unlock()
}

func (s *stats) deliver(sub Subscriber) { s.delivered(sub) }

// delivered counts a delivery and returns the subscription's counts, whose
// ARN, protocol and endpoint never change.
func (s *stats) delivered(sub Subscriber) *SubscriptionCounts {
	s.mu.Lock()
	c := s.deliveredLocked(sub)
	s.mu.Unlock()
	return c
}

// deliveredLocked is delivered for a caller holding mu.
func (s *stats) deliveredLocked(sub Subscriber) *SubscriptionCounts {
	s.total.Delivered++
	c := s.sub(sub)
	c.Delivered++
	return c
}

func (s *stats) skip(sub Subscriber) {
	s.count(sub, func(c *SubscriptionCounts) { c.NotDelivered++ })
}

// filteredLocked counts a message sub's filter policy refused, for a
// caller holding mu, and returns the subscription's counts.
func (s *stats) filteredLocked(sub Subscriber) *SubscriptionCounts {
	s.total.Filtered++
	c := s.sub(sub)
	c.Filtered++
	return c
}

func (s *stats) filter(sub Subscriber) {
	s.count(sub, func(c *SubscriptionCounts) { c.Filtered++ })
}

func (s *stats) overflow(sub Subscriber) {
	s.count(sub, func(c *SubscriptionCounts) { c.Overflowed++ })
}

func (s *stats) drop(sub Subscriber) {
	s.count(sub, func(c *SubscriptionCounts) { c.Dropped++ })
}

func (s *stats) deadLetter(sub Subscriber) {
	s.count(sub, func(c *SubscriptionCounts) { c.DeadLettered++ })
}

func (s *stats) fail(now time.Time, messageID, topicArn string, sub Subscriber, res result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total.Failed++
	s.sub(sub).Failed++
	if len(s.failures) == recentFailures {
		copy(s.failures, s.failures[1:])
		s.failures = s.failures[:recentFailures-1]
	}
	s.failures = append(s.failures, FailureRecord{
		Time: now, MessageID: messageID, TopicArn: topicArn, SubscriptionArn: sub.Arn,
		Endpoint: sub.Endpoint, Reason: res.err.Error(), ClientError: res.client,
	})
}

// Stats returns the counts so far, subscriptions sorted by ARN.
func (d *Dispatcher) Stats() Stats {
	lanes, busy := d.lanes.counts()
	s := &d.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{
		Delivered: s.total.Delivered, Failed: s.total.Failed, NotDelivered: s.total.NotDelivered,
		DeadLettered: s.total.DeadLettered, Dropped: s.total.Dropped, Filtered: s.total.Filtered, Overflowed: s.total.Overflowed, Scheduled: d.scheduled.Load(), Pending: busy,
		Subscriptions: make([]SubscriptionCounts, 0, len(s.subs)),
		Failures:      append([]FailureRecord{}, s.failures...),
	}
	for _, c := range s.subs {
		sc := *c
		sc.Pending = int64(lanes[c.SubscriptionArn].pending)
		out.Subscriptions = append(out.Subscriptions, sc)
	}
	for arn, lc := range lanes {
		if s.subs[arn] == nil && lc.pending > 0 { // nothing to count yet but what waits
			out.Subscriptions = append(out.Subscriptions, SubscriptionCounts{
				SubscriptionArn: arn, Protocol: lc.protocol, Endpoint: lc.endpoint, Pending: int64(lc.pending)})
		}
	}
	sort.Slice(out.Subscriptions, func(i, j int) bool {
		return out.Subscriptions[i].SubscriptionArn < out.Subscriptions[j].SubscriptionArn
	})
	return out
}
