// Package fanouttest runs fanout inside Go tests: a server per test on a
// free loopback port, ready aws-sdk-go-v2 clients, a manual clock, a look at
// queues that consumes nothing, and Go functions as HTTP and Lambda
// subscribers.
//
//	func TestOrders(t *testing.T) {
//		t.Parallel()
//		srv := fanouttest.Start(t)          // stopped by t.Cleanup
//		sqsClient := srv.SQSClient()        // aws-sdk-go-v2, pointed at srv
//		// ... create queues, send, publish ...
//		srv.Advance(30 * time.Second)       // visibility timeouts end, retries run
//		msgs := srv.Peek("orders")          // changes nothing
//	}
//
// Each server has its own engines and clock: tests that start one each may
// run in parallel. Starting and stopping one takes about a millisecond.
package fanouttest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/sdktest"
	"github.com/fanout/fanout/sqs"
	"github.com/fanout/fanout/topology"
)

// TB is what the helper needs of a test: *testing.T, *testing.B, *testing.F
// and Ginkgo's GinkgoT() all have it.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Option configures a server.
type Option func(*config)

type config struct {
	opts     fanout.Options
	realTime bool
	start    time.Time
}

// WithRealTime runs the server on the wall clock (which Advance can still
// move forward) instead of the default manual clock.
func WithRealTime() Option { return func(c *config) { c.realTime = true } }

// WithStartTime sets where the manual clock starts; default the time Start
// is called, to the second.
func WithStartTime(t time.Time) Option { return func(c *config) { c.start = t } }

// WithTopology creates the queues, topics and subscriptions of t at start,
// and again after each Reset.
func WithTopology(t *topology.Topology) Option { return func(c *config) { c.opts.Topology = t } }

// WithOptions changes fanout's options before the server starts: region,
// account, EnforcePolicies, the guard rails, a logger. Addr and Clock are
// the helper's.
func WithOptions(f func(*fanout.Options)) Option { return func(c *config) { f(&c.opts) } }

// Server is a fanout started for a test. Its methods that can fail (Peek,
// WaitForMessages, HTTPEndpoint, LambdaFunction) fail the test given to
// Start: call them from that test's goroutine (a subtest using its parent's
// server would report its failures as the parent's).
type Server struct {
	t      TB
	srv    *fanout.Server
	clock  clock.Advancer
	manual *clock.Manual // nil with WithRealTime

	mu      sync.Mutex
	servers []*httptest.Server // endpoints, closed with the server
	closed  bool
}

// Start starts fanout on a free loopback port and stops it when the test
// ends. It fails the test if fanout cannot start.
func Start(t TB, opts ...Option) *Server {
	t.Helper()
	s, err := Run(opts...)
	if err != nil {
		t.Fatalf("fanouttest: start fanout: %v", err)
		return nil
	}
	s.t = t
	t.Cleanup(s.Close)
	return s
}

// Run starts fanout on a free loopback port; Close stops it. Tests use
// Start, which closes it for them; a server from Run panics where one from
// Start would fail its test.
func Run(opts ...Option) (*Server, error) {
	c := config{start: time.Now().Truncate(time.Second)}
	for _, o := range opts {
		o(&c)
	}
	s := &Server{t: panicTB{}}
	if c.realTime {
		s.clock = clock.NewAdjustable()
	} else {
		s.manual = clock.NewManual(c.start)
		s.clock = s.manual
	}
	c.opts.Addr, c.opts.Clock = "127.0.0.1:0", s.clock
	srv, err := fanout.Start(context.Background(), c.opts)
	if err != nil {
		return nil, err
	}
	s.srv = srv
	return s, nil
}

// Close stops the server and the endpoints the helper started for it. Long
// polls in progress return no messages.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	servers := s.servers
	s.mu.Unlock()
	_ = s.srv.Close()
	for _, h := range servers {
		h.Close()
	}
}

// Fanout returns the server itself, for what the helper does not wrap.
func (s *Server) Fanout() *fanout.Server { return s.srv }

// URL returns the endpoint SDK clients and the AWS CLI use.
func (s *Server) URL() string { return s.srv.URL() }

// Region and Account are what fanout answers as (us-east-1, 000000000000
// unless WithOptions changed them).
func (s *Server) Region() string  { return s.srv.SQS().Region() }
func (s *Server) Account() string { return s.srv.SQS().Account() }

// HTTPClient returns an HTTP client for aws-sdk-go-v2 clients that talk to
// fanout on loopback. It avoids a client-side race of the SDK
// (aws/aws-sdk-go-v2#2737): on a fast local server a call sometimes fails
// with "deserialization failed ... use of closed network connection"
// although the server answered, and a ReceiveMessage lost that way leaves
// its messages in flight until their visibility timeout ends. The clients of
// AWSConfig use it; use it in configs of your own.
func HTTPClient() *http.Client { return sdktest.HTTPClient() }

// AWSConfig returns an aws.Config for the server: static credentials, its
// region, its endpoint as BaseEndpoint and HTTPClient.
func (s *Server) AWSConfig() aws.Config {
	return aws.Config{
		Region:       s.Region(),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   HTTPClient(),
		BaseEndpoint: aws.String(s.URL()),
	}
}

// AWSConfigFor is AWSConfig for another account and region: its access key
// id is the 12-digit account, which is how fanout picks a call's account,
// and region "" means the server's. Queues and topics made through it live
// in that (account, region) namespace; Peek and the other helpers find them
// by their queue URL.
func (s *Server) AWSConfigFor(account, region string) aws.Config {
	cfg := s.AWSConfig()
	if region != "" {
		cfg.Region = region
	}
	cfg.Credentials = credentials.NewStaticCredentialsProvider(account, "test", "")
	return cfg
}

// SQSClient returns an SQS client of aws-sdk-go-v2 pointed at the server.
func (s *Server) SQSClient(optFns ...func(*awssqs.Options)) *awssqs.Client {
	return awssqs.NewFromConfig(s.AWSConfig(), optFns...)
}

// SNSClient returns an SNS client of aws-sdk-go-v2 pointed at the server.
func (s *Server) SNSClient(optFns ...func(*awssns.Options)) *awssns.Client {
	return awssns.NewFromConfig(s.AWSConfig(), optFns...)
}

// Clock returns the server's clock: a *clock.Manual unless WithRealTime.
func (s *Server) Clock() clock.Clock { return s.clock }

// Now returns the time on the server's clock.
func (s *Server) Now() time.Time { return s.clock.Now() }

// settleLimit bounds how long the helper waits for deliveries to finish.
const settleLimit = time.Minute

// Advance moves the server's clock forward by d and returns once what fell
// due has run: visibility timeouts and delays end, retention expires, long
// polls time out, and SNS retries to HTTP and Lambda endpoints are made,
// with their own deliveries, as POST /_fanout/clock does. With
// WithRealTime and a data dir (WithOptions), the new offset is stored
// first, so a server restarted on that dir keeps it; a failure to store it
// fails the test and leaves the clock where it was.
func (s *Server) Advance(d time.Duration) {
	if s.manual != nil {
		s.manual.Advance(d)
	} else if err := s.srv.AdvanceClock(d); err != nil {
		s.t.Helper()
		s.t.Fatalf("fanouttest: Advance(%s): %v", d, err)
		return
	}
	s.Settle()
}

// Settle waits until the SNS deliveries in progress are done: attempts to
// HTTP and Lambda endpoints run on workers, so call it after a Publish or a
// Subscribe (whose confirmation goes to the endpoint) before looking at what
// an endpoint received. Deliveries to SQS queues are done before Publish
// returns and need no wait.
func (s *Server) Settle() {
	ctx, cancel := context.WithTimeout(context.Background(), settleLimit)
	defer cancel()
	_ = s.srv.Deliveries().Settle(ctx)
}

// Reset puts the server back as it started: every queue, topic and
// subscription deleted, pending deliveries and retries cancelled, records
// emptied, the WithTopology topology created again. The clock keeps its
// time: fanout's time never goes backwards.
func (s *Server) Reset() error { return s.srv.Reset() }

// Deliveries returns what became of a published message at each
// subscription of its topic: every attempt with its outcome, and for a
// subscription whose filter policy refused it, the policy and why, key by
// key (Record.Filter).
func (s *Server) Deliveries(messageID string) []delivery.Record {
	return s.srv.Deliveries().Deliveries(messageID)
}

// queueEngine finds the engine and name of a queue given by name (the
// default namespace's) or by URL: a URL names its account in its path and
// may name its region (sqs.REGION.… hosts, /queue/REGION/ACCOUNT/NAME
// paths); without a region, the account's namespace that holds the queue,
// the server's region first.
func (s *Server) queueEngine(queue string) (*sqs.Engine, string) {
	i := strings.LastIndexByte(queue, '/')
	if i < 0 {
		return s.srv.SQS(), queue
	}
	name := queue[i+1:]
	u, err := url.Parse(queue)
	if err != nil {
		return s.srv.SQS(), name
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || !isAccount(parts[len(parts)-2]) {
		return s.srv.SQS(), name
	}
	account, region := parts[len(parts)-2], ""
	if len(parts) >= 3 && parts[len(parts)-3] != "queue" {
		region = parts[len(parts)-3]
	} else if host := u.Hostname(); strings.HasPrefix(host, "sqs.") {
		region, _, _ = strings.Cut(strings.TrimPrefix(host, "sqs."), ".")
	}
	engines := s.srv.TopologyEngines()
	if region != "" {
		return engines.Namespace(account, region, false).SQS, name
	}
	found := engines.Namespace(account, s.Region(), false).SQS
	for _, ns := range engines.Namespaces() {
		if ns.SQS.Account() != account || ns.SQS.Region() == s.Region() {
			continue
		}
		if _, err := found.Queue(name); err != nil {
			if _, err := ns.SQS.Queue(name); err == nil {
				found = ns.SQS
			}
		}
	}
	return found, name
}

func isAccount(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// panicTB stands in for a test outside one (Run, examples).
type panicTB struct{}

func (panicTB) Helper()                           {}
func (panicTB) Cleanup(func())                    {}
func (panicTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
