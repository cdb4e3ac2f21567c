// Package sns is fanout's in-memory SNS engine: topics, subscriptions,
// attributes, tags, permissions and publishing, with FIFO topics, message
// archives and replays. It knows nothing of HTTP or XML (sns/api puts it on
// the wire) and hands each matching message to a Deliverer (the delivery
// package) for the subscription's endpoint.
//
// Lock order: a FIFO topic's publish lock, then Engine.mu, then Topic.mu.
// Nothing is delivered while Engine.mu or a Topic.mu is held; a FIFO topic
// keeps its publish lock across delivery, so that every queue receives the
// topic's messages in sequence-number order.
package sns

import (
	"sync"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/filter"
)

// Deliverer takes a message to one subscription. Deliveries to SQS complete
// before Deliver returns. Confirm sends a subscription's confirmation
// messages (SubscriptionConfirmation, UnsubscribeConfirmation).
type Deliverer interface {
	Deliver(m *delivery.Message, sub delivery.Subscriber) error
	Confirm(c *delivery.Control, sub delivery.Subscriber)
}

// JournaledDeliverer is a Deliverer that can keep deliveries durably (the
// delivery package's, with a journal): a publish hands each message over
// with DeliverJournaled and waits for the Waiters it returns before it
// answers, so that the deliveries of one publish share one wait.
type JournaledDeliverer interface {
	DeliverJournaled(m *delivery.Message, sub delivery.Subscriber) (delivery.Waiter, error)
}

// FanDeliverer is a JournaledDeliverer that takes one message's deliveries
// together (the delivery package's): a publish delivers through the Fan it
// returns and closes it once every subscription was tried.
type FanDeliverer interface {
	Fan(m *delivery.Message) delivery.Fan
}

// FilterRecorder is told of each message a subscription's filter policy
// refused, with what the policy was matched against; a Deliverer that
// implements it keeps a record of why (the delivery package does).
type FilterRecorder interface {
	Filtered(m *delivery.Message, sub delivery.Subscriber, p *filter.Policy, fm filter.Message)
}

// Options configure an Engine.
type Options struct {
	Clock     clock.Clock // default clock.Real
	Region    string      // default us-east-1
	Account   string      // default 000000000000
	Deliverer Deliverer   // default: deliver nothing
	// CheckEndpoint, when set, may refuse a subscription's endpoint with a
	// reason (an http endpoint that is fanout itself): Subscribe answers
	// InvalidParameter.
	CheckEndpoint func(protocol, endpoint string) error
	// Journal, when set, is told of every change to the engine's durable
	// state and each call waits until its change is durable (see Journal).
	Journal Journal
}

// Engine holds the topics and subscriptions of one account and region.
type Engine struct {
	opts      Options
	clock     clock.Clock
	deliver   Deliverer
	journaled JournaledDeliverer // deliver, if it is one

	mu     sync.RWMutex
	topics map[string]*Topic        // by name
	subs   map[string]*Subscription // by ARN
	tokens map[string]*Subscription // confirmation token -> pending subscription
	seq    uint64                   // creation order of subscriptions
}

type discard struct{}

func (discard) Deliver(*delivery.Message, delivery.Subscriber) error { return nil }
func (discard) Confirm(*delivery.Control, delivery.Subscriber)       {}

// New returns an empty engine.
func New(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.Account == "" {
		opts.Account = "000000000000"
	}
	if opts.Deliverer == nil {
		opts.Deliverer = discard{}
	}
	e := &Engine{
		opts:    opts,
		clock:   opts.Clock,
		deliver: opts.Deliverer,
		topics:  map[string]*Topic{},
		subs:    map[string]*Subscription{},
		tokens:  map[string]*Subscription{},
	}
	e.journaled, _ = opts.Deliverer.(JournaledDeliverer)
	return e
}

// Region returns the engine's region.
func (e *Engine) Region() string { return e.opts.Region }

// Account returns the engine's account id.
func (e *Engine) Account() string { return e.opts.Account }

// topic returns the topic called name, or NotFound.
func (e *Engine) topic(name string) (*Topic, error) {
	e.mu.RLock()
	t := e.topics[name]
	e.mu.RUnlock()
	if t == nil {
		return nil, topicNotFound()
	}
	return t, nil
}

// topicByArn resolves a TopicArn parameter for action.
func (e *Engine) topicByArn(s, param, action string) (*Topic, error) {
	name, err := e.topicName(s, param, action)
	if err != nil {
		return nil, err
	}
	return e.topic(name)
}
