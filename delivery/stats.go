package delivery

import (
	"errors"
	"sort"
	"sync"
	"time"
)

// recentFailures is how many failures Stats keeps, newest last.
const recentFailures = 100

// Stats is a snapshot of what the dispatcher did, for the admin API.
type Stats struct {
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	// NotDelivered counts messages for protocols fanout does not deliver to
	// yet (lambda, firehose, application, and confirmed http/email ones).
	NotDelivered  int64                `json:"notDelivered"`
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
	NotDelivered    int64  `json:"notDelivered"`
}

// FailureRecord is one failed delivery.
type FailureRecord struct {
	Time            time.Time `json:"time"`
	MessageID       string    `json:"messageId"`
	TopicArn        string    `json:"topicArn"`
	SubscriptionArn string    `json:"subscriptionArn"`
	Endpoint        string    `json:"endpoint"`
	Reason          string    `json:"reason"`
	// ClientError is true for failures AWS would not retry (they go
	// straight to a subscription's dead-letter queue).
	ClientError bool `json:"clientError"`
}

type stats struct {
	mu       sync.Mutex
	total    SubscriptionCounts
	subs     map[string]*SubscriptionCounts
	failures []FailureRecord
}

func (s *stats) init() { s.subs = map[string]*SubscriptionCounts{} }

func (s *stats) sub(sub Subscriber) *SubscriptionCounts {
	c := s.subs[sub.Arn]
	if c == nil {
		c = &SubscriptionCounts{SubscriptionArn: sub.Arn, Protocol: sub.Protocol, Endpoint: sub.Endpoint}
		s.subs[sub.Arn] = c
	}
	return c
}

func (s *stats) deliver(sub Subscriber) {
	s.mu.Lock()
	s.total.Delivered++
	s.sub(sub).Delivered++
	s.mu.Unlock()
}

func (s *stats) skip(sub Subscriber) {
	s.mu.Lock()
	s.total.NotDelivered++
	s.sub(sub).NotDelivered++
	s.mu.Unlock()
}

func (s *stats) fail(now time.Time, m *Message, sub Subscriber, err error) {
	var f *Failure
	client := errors.As(err, &f) && f.Client
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total.Failed++
	s.sub(sub).Failed++
	if len(s.failures) == recentFailures {
		copy(s.failures, s.failures[1:])
		s.failures = s.failures[:recentFailures-1]
	}
	s.failures = append(s.failures, FailureRecord{
		Time: now, MessageID: m.ID, TopicArn: m.TopicArn, SubscriptionArn: sub.Arn,
		Endpoint: sub.Endpoint, Reason: err.Error(), ClientError: client,
	})
}

// Stats returns the counts so far, subscriptions sorted by ARN.
func (d *Dispatcher) Stats() Stats {
	s := &d.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{
		Delivered: s.total.Delivered, Failed: s.total.Failed, NotDelivered: s.total.NotDelivered,
		Subscriptions: make([]SubscriptionCounts, 0, len(s.subs)),
		Failures:      append([]FailureRecord{}, s.failures...),
	}
	for _, c := range s.subs {
		out.Subscriptions = append(out.Subscriptions, *c)
	}
	sort.Slice(out.Subscriptions, func(i, j int) bool {
		return out.Subscriptions[i].SubscriptionArn < out.Subscriptions[j].SubscriptionArn
	})
	return out
}
