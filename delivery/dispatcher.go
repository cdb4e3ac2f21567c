// Package delivery takes a published SNS message to each subscription's
// endpoint: it renders the payload (JSON envelope or raw), signs it, and
// hands it to the endpoint of the subscription's protocol. Only Amazon SQS
// endpoints exist yet; they are reached in-process, through the small
// [Queues] interface this package declares, and a message is enqueued before
// Deliver returns.
//
// Each protocol is an endpoint behind one interface, so HTTP/S, Lambda-style
// hooks and the rest can be added beside SQS. Retries and dead-letter queues
// are not implemented yet: a failed delivery is logged and counted (see
// [Dispatcher.Stats]).
package delivery

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/fanout/fanout/internal/clock"
)

// Signer signs a string to sign for a SignatureVersion ("1" or "2").
type Signer interface {
	Sign(version, text string) (string, error)
}

// Options configure a Dispatcher.
type Options struct {
	Queues Queues
	Signer Signer
	Links  Links
	// EnforcePolicies makes SQS deliveries obey the queue's Policy, as AWS
	// does: without a statement allowing sns.amazonaws.com to SendMessage
	// (for this topic), the delivery fails.
	EnforcePolicies bool
	Clock           clock.Clock
	Logger          *slog.Logger
}

// endpoint delivers to the endpoints of one protocol.
type endpoint interface {
	deliver(d *Dispatcher, m *Message, sub Subscriber) error
}

// Dispatcher delivers messages. It is safe for concurrent use.
type Dispatcher struct {
	opts      Options
	endpoints map[string]endpoint
	stats     stats
	policies  policyCache
}

// New returns a dispatcher.
func New(opts Options) *Dispatcher {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	d := &Dispatcher{opts: opts, endpoints: map[string]endpoint{"sqs": sqsEndpoint{}}}
	d.stats.init()
	return d
}

// ErrNotSupported is returned for protocols fanout does not deliver to yet.
var ErrNotSupported = errors.New("delivery to this protocol is not implemented")

// Failure is a failed delivery: Client failures are the endpoint's fault and
// AWS does not retry them (the queue is gone, its policy refuses SNS, the
// message is invalid for it); the others are worth retrying.
type Failure struct {
	Client bool
	Reason string
}

func (f *Failure) Error() string { return f.Reason }

func clientFailure(format string, args ...any) *Failure {
	return &Failure{Client: true, Reason: fmt.Sprintf(format, args...)}
}

// Deliver delivers m to sub now and records the outcome. For SQS the message
// is in the queue when Deliver returns nil.
func (d *Dispatcher) Deliver(m *Message, sub Subscriber) error {
	ep, ok := d.endpoints[sub.Protocol]
	if !ok {
		d.stats.skip(sub)
		d.opts.Logger.Debug("sns delivery skipped", "protocol", sub.Protocol, "subscription", sub.Arn, "message_id", m.ID)
		return ErrNotSupported
	}
	err := ep.deliver(d, m, sub)
	if err != nil {
		d.stats.fail(d.opts.Clock.Now(), m, sub, err)
		d.opts.Logger.Warn("sns delivery failed", "subscription", sub.Arn, "endpoint", sub.Endpoint, "message_id", m.ID, "error", err)
		return err
	}
	d.stats.deliver(sub)
	return nil
}

// payload is what sub receives of m: the envelope, or the raw text.
func (d *Dispatcher) payload(m *Message, sub Subscriber) (string, error) {
	if sub.Raw {
		return m.For(sub.Protocol), nil
	}
	return d.envelope(m, sub)
}
