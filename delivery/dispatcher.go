// Package delivery takes a published SNS message to each subscription's
// endpoint: it renders the payload (JSON envelope or raw), signs it, makes
// the delivery attempts, retries failed ones on the schedule of the
// subscription's delivery policy, and sends what cannot be delivered to the
// subscription's dead-letter queue.
//
// Endpoints: Amazon SQS queues, reached in-process through the small
// [Queues] interface this package declares (a message is enqueued before
// Deliver returns); HTTP/S endpoints and Lambda functions (an HTTP hook per
// function), each subscription with its own bounded queue and concurrency
// (see [Options.Backlog]) so that a dead endpoint slows only itself; email,
// which is recorded
// in the outbox and also sent by SMTP when a server is configured; and sms,
// application and firehose, which are recorded in the outbox.
//
// Time is the injected clock's: every pending retry and throttled attempt is
// one timer on it (no goroutine waits for one), so moving a manual or
// adjustable clock forward runs what falls due. See [Dispatcher.Settle].
//
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/clock"
)

// Signer signs a string to sign for a SignatureVersion ("1" or "2").
type Signer interface {
	Sign(version, text string) (string, error)
}

// DefaultTimeout is how long an HTTP/S, Lambda or SMTP endpoint has to
// answer: AWS gives HTTP/S endpoints 15 seconds.
// https://docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.prepare.html
const DefaultTimeout = 15 * time.Second

// DefaultWorkers is how many HTTP/S, Lambda and SMTP attempts run at once.
const DefaultWorkers = 64

// Options configure a Dispatcher.
type Options struct {
	Queues Queues
	Signer Signer
	Links  Links
	// EnforcePolicies makes SQS deliveries obey the queue's Policy, as AWS
	// does: without a statement allowing sns.amazonaws.com to SendMessage
	// (for this topic), the delivery fails. Dead-letter queues too.
	EnforcePolicies bool
	Clock           clock.Clock
	Logger          *slog.Logger

	// Timeout bounds one HTTP/S, Lambda or SMTP attempt; default DefaultTimeout.
	Timeout time.Duration
	// Workers bounds the attempts in progress at once to endpoints that
	// answer, default DefaultWorkers; as many again may be in progress to
	// slow endpoints (an attempt that ran 250 ms moves to that budget).
	Workers int
	// SubscriptionWorkers bounds one subscription's attempts in progress;
	// default Workers/4.
	SubscriptionWorkers int
	// Backlog bounds one subscription's pending deliveries (queued, in
	// progress or waiting for a retry); default DefaultBacklog. A new
	// delivery past it overflows: it goes to the subscription's dead-letter
	// queue, or is dropped without one, and is counted (Overflowed).
	Backlog int
	// InsecureEndpoints accepts any TLS certificate from https endpoints
	// (self-signed ones in tests); by default they must verify.
	InsecureEndpoints bool
	// Lambda maps function names to the URL of an HTTP hook speaking the
	// Lambda Invoke API (the Runtime Interface Emulator, sam local
	// start-lambda). A URL without a path gets
	// /2015-03-31/functions/<name>/invocations.
	Lambda map[string]string
	// SMTP is the host:port of a mail server email subscriptions are sent
	// to; "" records email in the outbox only.
	SMTP string
	// HTTPClient overrides the client for HTTP/S and Lambda endpoints.
	HTTPClient *http.Client
	// Keep is how many deliveries Records lists and how many entries the
	// outbox keeps; default DefaultKeepRecords.
	Keep int
	// Self returns the host:port addresses fanout is reached at (where it
	// listens, its PublicURL): no delivery may connect to them.
	Self func() []string
	// EndpointAllow, when set, restricts the addresses deliveries connect to
	// (HTTP/S, Lambda hooks, SMTP), checked on the resolved address.
	EndpointAllow []netip.Prefix
	// RecordBytes is the byte budget of the bodies and attributes the
	// records and the outbox keep (half each); default DefaultRecordBytes.
	// Past it the oldest entries are forgotten, and counted.
	RecordBytes int64
	// Journal, when set, is told of every pending HTTP/S, Lambda and SMTP
	// delivery, so that a store keeps them across a restart (see Journal).
	Journal Journal
}

// endpoint delivers to the endpoints of one protocol.
type endpoint interface {
	// attempt makes one delivery attempt of j.
	attempt(d *Dispatcher, j *job) result
	// remote reports whether attempts do network I/O, and so run on the
	// subscription's lane instead of the caller's goroutine.
	remote(d *Dispatcher) bool
}

// result is the outcome of one attempt.
type result struct {
	err    error // nil: delivered
	client bool  // the endpoint's fault: not retried
	status int   // HTTP status, when there was an answer
}

func ok() result { return result{} }

func clientErr(format string, args ...any) result {
	return result{err: fmt.Errorf(format, args...), client: true}
}

func serverErr(format string, args ...any) result {
	return result{err: fmt.Errorf(format, args...)}
}

// Dispatcher delivers messages. It is safe for concurrent use.
type Dispatcher struct {
	opts      Options
	clock     clock.Clock
	endpoints map[string]endpoint
	stats     stats
	policies  policyCache
	records   *records
	entryCap  int // longest body a record or outbox entry keeps
	outbox    *outbox
	tracker   tracker
	lanes     *lanes
	throttle  throttle
	client    *http.Client
	egress    *egress
	// inlineTimers: the clock is manual, so due work runs inside Advance
	// and should finish there (see fire).
	inlineTimers bool
	scheduled    atomic.Int64 // jobs waiting on a clock timer
	closed       atomic.Bool
	generation   atomic.Uint64 // bumped by Reset
	parked       parkedJobs
	lambdas      lambdas
	journal      journal       // with Options.Journal
	jobIDs       atomic.Uint64 // the last journaled job's id
	held         []*job        // restored, waiting for Resume
}

// New returns a dispatcher.
func New(opts Options) *Dispatcher {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.RecordBytes <= 0 {
		opts.RecordBytes = DefaultRecordBytes
	}
	entryCap := int(min(maxEntryBody, opts.RecordBytes/16))
	d := &Dispatcher{
		opts:     opts,
		clock:    opts.Clock,
		records:  newRecords(opts.Keep, opts.RecordBytes/2),
		outbox:   newOutbox(opts.Keep, opts.RecordBytes/2, entryCap),
		entryCap: entryCap,
	}
	for name, url := range opts.Lambda {
		d.SetLambda(name, url)
	}
	_, d.inlineTimers = opts.Clock.(*clock.Manual)
	d.egress = &egress{self: opts.Self, allow: opts.EndpointAllow}
	d.client = opts.HTTPClient
	if d.client == nil {
		d.client = newHTTPClient(opts, d.egress)
	}
	web := httpEndpoint{}
	email := emailEndpoint{}
	d.endpoints = map[string]endpoint{
		"sqs": sqsEndpoint{}, "http": web, "https": web, "lambda": lambdaEndpoint{},
		"email": email, "email-json": email,
		"sms": outboxEndpoint{}, "application": outboxEndpoint{}, "firehose": outboxEndpoint{},
	}
	d.stats.init()
	d.tracker.init()
	if opts.SubscriptionWorkers <= 0 {
		opts.SubscriptionWorkers = max(1, opts.Workers/4)
	}
	if opts.Backlog <= 0 {
		opts.Backlog = DefaultBacklog
	}
	d.opts = opts
	d.lanes = newLanes(opts.Workers, opts.SubscriptionWorkers, opts.Backlog, d.work, &d.tracker)
	return d
}

// Close stops retrying: timers that fire afterwards do nothing. Attempts in
// progress finish.
func (d *Dispatcher) Close() {
	d.closed.Store(true)
	d.client.CloseIdleConnections()
}

// ErrNotSupported is returned for protocols fanout does not deliver to.
var ErrNotSupported = errors.New("delivery to this protocol is not implemented")

// Failure is a failed delivery attempt: Client failures are the endpoint's
// fault and AWS does not retry them (the queue is gone, its policy refuses
// SNS, the message is invalid for it); the others are worth retrying.
type Failure struct {
	Client bool
	Reason string
	Status int // the HTTP status, if the endpoint answered
}

func (f *Failure) Error() string { return f.Reason }

// Deliver starts delivering m to sub. For SQS the first attempt is made
// before Deliver returns, and its failure is returned (a *Failure); other
// protocols are attempted on the worker pool and Deliver returns nil (with
// a journal, once the delivery is recorded, or the store's error).
// Retries and dead-lettering follow in either case.
func (d *Dispatcher) Deliver(m *Message, sub Subscriber) error {
	w, err := d.DeliverJournaled(m, sub)
	if w != nil {
		if werr := w.Wait(); werr != nil {
			return werr
		}
	}
	return err
}

// DeliverJournaled is Deliver without waiting for the delivery's record in
// the journal: it returns the record's Waiter (nil when nothing was
// recorded), so that a publish to several subscriptions waits once.
func (d *Dispatcher) DeliverJournaled(m *Message, sub Subscriber) (Waiter, error) {
	return d.deliverJournaled(m, sub, nil)
}

// deliverJournaled is DeliverJournaled, for a Fan when f is not nil: what
// it records itself follows what f holds back.
func (d *Dispatcher) deliverJournaled(m *Message, sub Subscriber, f *Fan) (Waiter, error) {
	ep, ok := d.endpoints[sub.Protocol]
	if !ok {
		d.stats.skip(sub)
		d.opts.Logger.Debug("sns delivery skipped", "protocol", sub.Protocol, "subscription", sub.Arn, "message_id", m.ID)
		return nil, ErrNotSupported
	}
	if _, toQueue := ep.(sqsEndpoint); toQueue && sub.Policy == nil {
		return d.deliverToQueue(m, sub, f)
	}
	if f != nil {
		f.flush()
	}
	return d.start(d.newJob(m, nil, sub, ep), f)
}

// Confirm sends a SubscriptionConfirmation or UnsubscribeConfirmation to
// sub, in the background, with the retries of sub's delivery policy. A
// control message that cannot be delivered is dropped, never dead-lettered.
// With a journal it returns once the message's delivery is recorded.
func (d *Dispatcher) Confirm(c *Control, sub Subscriber) {
	ep, ok := d.endpoints[sub.Protocol]
	if !ok {
		return
	}
	if w, _ := d.start(d.newJob(nil, c, sub, ep), nil); w != nil {
		if err := w.Wait(); err != nil {
			d.opts.Logger.Error("sns confirmation message not stored", "subscription", sub.Arn, "error", err)
		}
	}
}

// Settle waits until the work that is due now is done: every attempt in
// progress or queued, and every retry that falls due while they finish.
// Work started after Settle was called does not hold it up. After a manual
// or adjustable clock moves forward, Settle makes its effects visible.
func (d *Dispatcher) Settle(ctx context.Context) error {
	return d.tracker.settle(ctx)
}

// Pending returns how many deliveries are queued for an attempt or making
// one (those waiting on a clock timer are Scheduled).
func (d *Dispatcher) Pending() int64 {
	_, busy := d.lanes.counts()
	return busy
}

// Scheduled returns how many deliveries wait on a clock timer (a retry or
// a throttle slot).
func (d *Dispatcher) Scheduled() int64 { return d.scheduled.Load() }

// payload is what sub receives of m: the envelope, or the raw text.
func (d *Dispatcher) payload(m *Message, sub Subscriber) (string, error) {
	if sub.Raw {
		return m.For(sub.Protocol), nil
	}
	return d.envelope(m, sub)
}
