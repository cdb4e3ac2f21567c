// Package fanout is the composition root of the fanout emulator: it wires
// the SQS (and SNS) engines, their wire protocols and the /_fanout/ admin API
// into one http.Handler, and can run it on a loopback port for tests.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/admin"
	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/playground"
	"github.com/fanout/fanout/internal/reqlog"
	"github.com/fanout/fanout/internal/signing"
	"github.com/fanout/fanout/internal/sigv4"
	"github.com/fanout/fanout/sns"
	snsapi "github.com/fanout/fanout/sns/api"
	"github.com/fanout/fanout/sqs"
	sqsapi "github.com/fanout/fanout/sqs/api"
	"github.com/fanout/fanout/topology"
)

// Options configure a Server. The zero value serves us-east-1, account
// 000000000000, on the real clock.
type Options struct {
	// Addr is where Start listens; default 127.0.0.1:0 (a free port).
	Addr    string
	Region  string
	Account string
	// Clock is read by every timed behaviour; default the wall clock, which
	// POST /_fanout/clock can move forward.
	Clock  clock.Clock
	Logger *slog.Logger
	// QueueURLStyle is the shape of the queue URLs SQS returns: "" (the
	// Host header the client called: http://<host>/<account>/<name>),
	// "standard", "domain" or "path", as LocalStack's SQS_ENDPOINT_STRATEGY.
	QueueURLStyle string
	// NoRecreateWait and NoPurgeWait turn off two AWS guard rails that slow
	// tests down: QueueDeletedRecently and PurgeQueueInProgress.
	NoRecreateWait bool
	NoPurgeWait    bool
	// EnforcePolicies makes SNS deliveries to SQS obey the queue's Policy,
	// as AWS does: a queue must allow sns.amazonaws.com to SendMessage.
	EnforcePolicies bool
	// PublicURL is the base of the links SNS puts in messages
	// (SigningCertURL, UnsubscribeURL); default the address Start listens on.
	PublicURL string
	// AllowUnsigned accepts Query calls without a SigV4 signature, and as
	// GETs or non-form POSTs: what any web page can make a browser send.
	AllowUnsigned bool
	// Credentials, when set, are the only keys fanout accepts: every AWS
	// call must carry a valid SigV4 signature by one of them.
	Credentials []Credential
	// AllowedHosts are host names Start answers to besides the loopback
	// names (localhost, *.localhost, *.localhost.localstack.cloud) and IP
	// addresses: "name", "*.example.com", or "*" for any. Other Host headers
	// are refused, against DNS rebinding.
	AllowedHosts []string
	// ReadTimeout bounds reading a request, body included, and IdleTimeout
	// how long a keep-alive connection may wait for its next request;
	// defaults 60 s and 120 s.
	ReadTimeout, IdleTimeout time.Duration
	// CORSOrigins are the web pages' origins that may call fanout from a
	// browser: "https://app.example", "http://host:*" (any port) or "*";
	// default the pages of this machine (http://localhost:*,
	// http://127.0.0.1:*, http://[::1]:* and their https forms).
	CORSOrigins []string
	// TLS makes Start serve HTTPS, with a self-signed certificate made at
	// start (for the loopback names, the bind address and AllowedHosts),
	// on the same port as HTTP: each connection's first byte says which.
	// TLSCertFile and TLSKeyFile (PEM) give the certificate instead.
	TLS                     bool
	TLSCertFile, TLSKeyFile string
	// Pprof serves net/http/pprof under /_fanout/debug/pprof/.
	Pprof bool
	// Lambda maps Lambda function names to HTTP hooks that speak the Invoke
	// API (Runtime Interface Emulator, sam local start-lambda).
	Lambda map[string]string
	// SMTP is host:port of a mail server for email subscriptions; without
	// one, email is only recorded (GET /_fanout/sns/outbox).
	SMTP string
	// InsecureEndpoints lets https subscriptions use self-signed certificates.
	InsecureEndpoints bool
	// EndpointTimeout bounds one HTTP/S, Lambda or SMTP delivery attempt;
	// default 15 s, as on AWS.
	EndpointTimeout time.Duration
	// ConfigFile is a topology file (YAML or JSON, see package topology)
	// whose queues, topics and subscriptions New creates. An invalid file
	// creates nothing: New fails with every error in it.
	ConfigFile string
	// Topology is a topology as a Go value, created like ConfigFile's
	// (after it, when both are given).
	Topology *topology.Topology
	// RecordBytes is the byte budget of the message bodies the delivery
	// records and the SNS outbox keep; default delivery.DefaultRecordBytes.
	RecordBytes int64
	// DeliveryBacklog bounds one subscription's pending HTTP/S, Lambda and
	// SMTP deliveries; past it new ones go to its dead-letter queue, or are
	// dropped, and are counted. Default delivery.DefaultBacklog.
	DeliveryBacklog int
	// EndpointAllow, when set, restricts where deliveries may connect: CIDR
	// blocks or IP addresses, checked on the resolved address.
	EndpointAllow []string

	// DataDir, when set, keeps fanout's state in an op log in that
	// directory (created if needed), restored at the next start; without
	// it everything lives in memory only. One fanout at a time may use a
	// data dir. See durability.go.
	DataDir string
	// Durability is what a 2xx reply promises with a DataDir:
	// StrictDurability (the default) or RelaxedDurability.
	Durability Durability
	// SyncInterval bounds, with RelaxedDurability, how long an acknowledged write
	// may wait for its fsync; default 100 ms.
	SyncInterval time.Duration

	// openSegment, set by tests, opens the data dir's log segments: a disk
	// that fails on cue.
	openSegment func(path string) (oplog.SegmentFile, error)
}

// Credential is an access key fanout accepts when Options.Credentials is set.
type Credential struct {
	AccessKeyID, SecretAccessKey string
	// Account is the key's account id; default Options.Account.
	Account string
}

// Server is one fanout instance.
type Server struct {
	opts       Options
	sqs        *sqs.Engine // the default namespace's
	sns        *sns.Engine
	ns         *namespaces
	signer     *signing.Signer
	deliveries *delivery.Dispatcher
	handler    http.Handler
	router     *mux.Router // the /_fanout/ routes, kept for a test of their listing
	started    time.Time
	tlsCertPEM []byte     // with TLS, the certificate served
	store      *oplog.Log // with a data dir
	opened     opened     // what opening it found
	clockMu    sync.Mutex // with a data dir: one clock move stored at a time

	http     *http.Server
	listener net.Listener
	done     chan struct{}
}

// New builds a server without listening, with its topology
// (Options.ConfigFile, Options.Topology) created.
func New(opts Options) (*Server, error) {
	s, err := build(opts)
	if err != nil {
		return nil, err
	}
	if err := s.loadTopology(); err != nil {
		s.closeEngines()
		return nil, err
	}
	s.deliveries.Resume()
	return s, nil
}

// build builds a server without its topology.
func build(opts Options) (*Server, error) {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.Account == "" {
		opts.Account = "000000000000"
	}
	switch opts.QueueURLStyle {
	case sqsapi.URLHost, sqsapi.URLStandard, sqsapi.URLDomain, sqsapi.URLPath:
	default:
		return nil, fmt.Errorf("queue URL style %q: use standard, domain or path (or none for the Host header)", opts.QueueURLStyle)
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewAdjustable() // real time that /_fanout/clock can move forward
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, started: time.Now()}
	s.signer = signing.New() // the RSA key is made when first needed (or by WarmUp)
	allow, err := delivery.ParseEndpointAllow(strings.Join(opts.EndpointAllow, ","))
	if err != nil {
		return nil, fmt.Errorf("endpoint allow list: %w", err)
	}
	var recovered *durable.Recovered
	if opts.DataDir != "" {
		if recovered, err = s.openStore(opts.DataDir); err != nil {
			return nil, err
		}
	}
	s.deliveries = delivery.New(delivery.Options{
		Queues: queueRouter{s}, Signer: s.signer,
		Links:           delivery.Links{Base: s.publicURL, CertFile: s.signer.CertFile},
		EnforcePolicies: opts.EnforcePolicies, Clock: opts.Clock, Logger: opts.Logger,
		Lambda: opts.Lambda, SMTP: opts.SMTP, InsecureEndpoints: opts.InsecureEndpoints, Timeout: opts.EndpointTimeout,
		RecordBytes: opts.RecordBytes, Backlog: opts.DeliveryBacklog, EndpointAllow: allow, Self: s.selfAddrs,
		Journal: s.deliveryJournal(),
	})
	def := s.newNamespace(opts.Account, opts.Region)
	s.ns = newNamespaces(def, s.newNamespace)
	if recovered != nil {
		if err := s.restore(recovered); err != nil {
			s.closeEngines()
			return nil, err
		}
		s.logRestored()
	}
	s.sqs, s.sns = def.sqs, def.sns
	snsHandler := def.snsAPI
	r := mux.NewRouter()
	s.router = r
	snsHandler.WithAll(s.snsEngines)
	admin.Routes(r, admin.Deps{Started: s.started, Clock: opts.Clock, SQS: s.sqs, SNS: s.sns, SQSOf: s.ns.sqsEngine, Spaces: s.spaces, Deliveries: s.deliveries, Pprof: opts.Pprof, Settle: s.deliveries.Settle, Pending: s.deliveries.Pending,
		Advance: s.clockAdvancer()})
	admin.TopologyRoutes(r, s.TopologyEngines())
	snsapi.Routes(r, snsHandler, s.signer, s.deliveries)
	playground.Routes(r)
	s.resetRoutes(r)
	admin.Namespace(r) // unknown /_fanout/ paths: JSON 404; GET /_fanout/api
	aws := newDispatcher(s.ns)
	aws.allowUnsigned = opts.AllowUnsigned
	aws.enforcePolicies = opts.EnforcePolicies
	if len(opts.Credentials) > 0 {
		keys := make([]sigv4.Key, len(opts.Credentials))
		for i, c := range opts.Credentials {
			keys[i] = sigv4.Key{ID: c.AccessKeyID, Secret: c.SecretAccessKey, Account: c.Account}
			if keys[i].Account == "" {
				keys[i].Account = opts.Account
			}
		}
		aws.verifier = sigv4.NewVerifier(keys)
	}
	logged := reqlog.Wrap(aws, opts.Logger, guardRails)
	// The admin routes refuse state changes from other sites' pages.
	adminHandler := http.NewCrossOriginProtection().Handler(r)
	// AWS calls skip the router's matching: only /_fanout/ (and the
	// LocalStack paths) have routes.
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if isAdminPath(req.URL.Path) || routedOutside(req.URL.Path) {
			adminHandler.ServeHTTP(w, req)
			return
		}
		logged.ServeHTTP(w, req)
	})
	s.handler = s.corsPolicy(s.handler)
	return s, nil
}

func (s *Server) closeEngines() {
	for _, ns := range s.ns.all() {
		ns.sqs.Close()
	}
	s.deliveries.Close()
	s.closeStore()
}

// loadTopology creates what Options.ConfigFile and Options.Topology declare.
func (s *Server) loadTopology() error { return s.loadTopologyOf(nil) }

// loadTopologyOf creates what the topology declares in the namespaces keep
// picks (all when keep is nil).
func (s *Server) loadTopologyOf(keep func(account, region string) bool) error {
	engines := s.TopologyEngines()
	apply := func(t *topology.Topology) error {
		if keep != nil {
			t = t.Select(topology.Options{Account: s.opts.Account, Region: s.opts.Region}, keep)
		}
		_, err := topology.Apply(t, engines, topology.ApplyOptions{})
		return err
	}
	if s.opts.ConfigFile != "" {
		t, err := topology.ReadFile(s.opts.ConfigFile)
		if err != nil {
			return err
		}
		if err := apply(t); err != nil {
			return err
		}
	}
	if s.opts.Topology != nil {
		return apply(s.opts.Topology)
	}
	return nil
}

// guardRails say which flag turns off the AWS rule behind an error; the
// request log line of a call that hit one names it.
var guardRails = reqlog.Hints{
	"QueueDeletedRecently": "--no-recreate-wait (FANOUT_NO_RECREATE_WAIT)",
	"PurgeQueueInProgress": "--no-purge-wait (FANOUT_NO_PURGE_WAIT)",
}

// isAdminPath reports whether a request is for fanout's own endpoints
// rather than an AWS call: /_fanout/ and LocalStack's /_localstack/ and
// /_aws/ (no AWS call is POSTed to a path starting with an underscore).
func isAdminPath(p string) bool {
	return len(p) > 2 && p[1] == '_' && (strings.HasPrefix(p, "/_fanout/") || p == "/_fanout" ||
		strings.HasPrefix(p, "/_localstack/") || strings.HasPrefix(p, "/_aws/"))
}

// Handler returns the HTTP handler serving SQS, SNS and /_fanout/.
func (s *Server) Handler() http.Handler { return s.handler }

// SNS returns the SNS engine.
func (s *Server) SNS() *sns.Engine { return s.sns }

// Deliveries returns the SNS delivery dispatcher (its Stats count outcomes).
func (s *Server) Deliveries() *delivery.Dispatcher { return s.deliveries }

// WarmUp makes SNS's signing key in the background, so that the first
// signed message does not wait for it (tens of milliseconds).
func (s *Server) WarmUp() { s.signer.Warm() }

// publicURL is the base URL of SNS's links: PublicURL, else the address
// Start listens on (an unspecified address as localhost).
func (s *Server) publicURL() string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	if s.listener == nil {
		return "http://localhost:4566"
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return s.scheme() + net.JoinHostPort(host, port)
}

// selfAddrs are the host:port addresses fanout is reached at: where it
// listens and its PublicURL. Deliveries never connect to them.
func (s *Server) selfAddrs() []string {
	var out []string
	if a := s.Addr(); a != "" {
		out = append(out, a)
	}
	if s.opts.PublicURL == "" && s.listener == nil {
		return out // served through Handler: where is not known
	}
	if u, err := url.Parse(s.publicURL()); err == nil && u.Host != "" {
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out
}

// SQS returns the SQS engine.
func (s *Server) SQS() *sqs.Engine { return s.sqs }

// Clock returns the clock the server reads.
func (s *Server) Clock() clock.Clock { return s.opts.Clock }

// AdvanceClock moves the server's clock forward by d, as POST
// /_fanout/clock does: with a data dir and the default (adjustable) clock,
// the new offset is on disk before the clock moves, so a restart keeps it.
// A clock.Manual given in Options.Clock is moved too, and not stored: its
// time is its owner's. It does not wait for what falls due.
func (s *Server) AdvanceClock(d time.Duration) error {
	adv, ok := s.opts.Clock.(clock.Advancer)
	switch {
	case !ok:
		return errors.New("fanout: this server's clock cannot be moved")
	case d < 0:
		return fmt.Errorf("fanout: the clock moves forward only, not by %s", d)
	case adv.Now().Add(d).After(clock.Latest()):
		return fmt.Errorf("fanout: advancing by %s would take the clock past %s, the latest time it can read", d, clock.Latest().Format(time.RFC3339))
	}
	if advance := s.clockAdvancer(); advance != nil {
		return advance(d)
	}
	adv.Advance(d)
	return nil
}

// Start builds a server and serves it on opts.Addr (default a free loopback
// port) until ctx ends or Close is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := build(opts)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	tl, err := s.tlsListener(l)
	if err != nil {
		l.Close()
		s.closeEngines()
		return nil, err
	}
	l = tl
	s.listener = l
	// The topology is created once the address is known (SNS's links in
	// subscription confirmations name it) and before anything is served.
	if err := s.loadTopology(); err != nil {
		l.Close()
		s.closeEngines()
		return nil, err
	}
	s.deliveries.Resume() // restored deliveries, now that their links have the address
	s.http = s.httpServer(s.frontDoor(l, s.handler))
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logger.Error("serve", "error", err)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Addr returns the address Start listens on.
func (s *Server) Addr() string {
	if s.listener == nil {
		return ""
	}
	return s.listener.Addr().String()
}

// URL returns the endpoint URL clients use, e.g. http://127.0.0.1:4566.
func (s *Server) URL() string { return s.scheme() + s.Addr() }

func (s *Server) scheme() string {
	if s.tlsCertPEM != nil || s.opts.TLS || s.opts.TLSCertFile != "" {
		return "https://"
	}
	return "http://"
}

// Close ends long polls (they return no messages) and stops serving,
// waiting up to 2 seconds for requests in progress.
func (s *Server) Close() error {
	for _, ns := range s.ns.all() {
		ns.sqs.Close()
	}
	s.deliveries.Close()
	if s.http == nil {
		s.closeStore()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		// Connections a client opened but never used keep Shutdown waiting;
		// nothing is lost by closing them.
		_ = s.http.Close()
	}
	<-s.done
	s.closeStore()
	return nil
}
