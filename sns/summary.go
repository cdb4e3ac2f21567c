package sns

import "sort"

// TopicSummary is a topic as fanout's dashboard draws it.
type TopicSummary struct {
	Arn           string                `json:"arn"`
	Name          string                `json:"name"`
	Fifo          bool                  `json:"fifo"`
	Published     int64                 `json:"published"` // messages published since the topic was created
	Subscriptions []SubscriptionSummary `json:"subscriptions"`
}

// SubscriptionSummary is a subscription with what its filter policy did to
// the topic's messages: Matched went on to delivery, Filtered did not.
type SubscriptionSummary struct {
	Arn               string `json:"arn"`
	Protocol          string `json:"protocol"`
	Endpoint          string `json:"endpoint"`
	FilterPolicy      string `json:"filterPolicy,omitempty"`
	FilterPolicyScope string `json:"filterPolicyScope,omitempty"`
	Raw               bool   `json:"raw"`
	Pending           bool   `json:"pending"`
	DeadLetterArn     string `json:"deadLetterArn,omitempty"`
	Matched           int64  `json:"matched"`
	Filtered          int64  `json:"filtered"`
}

// Summaries lists every topic, in name order, with its subscriptions in
// creation order. It takes each topic's lock in turn, never two at once.
func (e *Engine) Summaries() []TopicSummary {
	e.mu.RLock()
	topics := make([]*Topic, 0, len(e.topics))
	for _, t := range e.topics {
		topics = append(topics, t)
	}
	e.mu.RUnlock()
	sort.Slice(topics, func(i, j int) bool { return topics[i].name < topics[j].name })
	out := make([]TopicSummary, 0, len(topics))
	for _, t := range topics {
		t.mu.Lock()
		if t.gone {
			t.mu.Unlock()
			continue
		}
		ts := TopicSummary{Arn: t.arn, Name: t.name, Fifo: t.fifo, Published: t.published.Load(), Subscriptions: make([]SubscriptionSummary, 0, len(t.subs))}
		for _, s := range t.subs {
			ts.Subscriptions = append(ts.Subscriptions, SubscriptionSummary{
				Arn: s.arn, Protocol: s.protocol, Endpoint: s.endpoint,
				FilterPolicy: s.cfg.filterText, FilterPolicyScope: string(s.cfg.scope),
				Raw: s.cfg.raw, Pending: s.pending, DeadLetterArn: s.cfg.dlq,
				Matched: s.matched.Load(), Filtered: s.filtered.Load(),
			})
		}
		t.mu.Unlock()
		out = append(out, ts)
	}
	return out
}

// SubscriptionToken returns the confirmation token of a subscription that
// needed one (http, https, email, ...), also once confirmed, as LocalStack's
// /_aws/sns/subscription-tokens shows it; "" for one confirmed at once.
func (e *Engine) SubscriptionToken(subscriptionArn string) (string, error) {
	e.mu.RLock()
	s := e.subs[subscriptionArn]
	e.mu.RUnlock()
	if s == nil {
		return "", subscriptionNotFound()
	}
	return s.token, nil
}
