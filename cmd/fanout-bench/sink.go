package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The http-delivery scenarios subscribe a sink: an HTTP server this tool
// runs on loopback, which answers at once, confirms its subscription by
// GETting the SubscribeURL it is sent, fails a chosen share of notification
// requests with 500, and reports every request as a sinkEvent.
//
// It also bounds the load: a publisher takes a window slot before each
// Publish and the sink frees it when the message is resolved, that is
// delivered or failed for the last time the delivery policy allows. fanout
// queues up to --delivery-backlog (1,000) deliveries per subscription and
// overflows the rest, so publishers left free would only fill that queue and
// lose messages; with the window the publish rate follows the delivery
// rate, and publish-to-delivery latency means delivery, not a backlog.

// Outcomes of one request to the sink.
const (
	sinkDelivered = iota // answered 200
	sinkFailed           // answered 500; the message has attempts left
	sinkGaveUp           // answered 500 to the message's last attempt
)

// sinkEvent is one notification request the sink answered.
type sinkEvent struct {
	recv    time.Time // when the sink got it
	sent    time.Time // the publish stamp in the body, zero if none
	outcome uint8
}

// sink is the HTTP endpoint of the http-delivery scenarios.
type sink struct {
	url         string
	failRate    float64     // share of notification requests answered 500
	fails       func() bool // draws whether a request fails; tests replace it
	maxAttempts int         // attempts the delivery policy allows a message
	srv         *http.Server
	hc          *http.Client // for SubscribeURLs; loopback only

	confirmOnce sync.Once
	confirmed   chan struct{} // closed once the subscription is confirmed
	// subscribed is closed once Subscribe has returned: the sink confirms
	// only then. (fanout reads a subscription's pending flag after Subscribe
	// lets go of its lock, so a confirmation racing the Subscribe call is a
	// data race there; no real client is that quick anyway.)
	subscribed     chan struct{}
	subscribedOnce sync.Once
	confirmErr     atomic.Pointer[string]

	mu       sync.Mutex
	attempts map[string]int // failed attempts so far of unresolved messages

	slots  chan struct{}  // the window: one element per unresolved publish
	events chan sinkEvent // read by the scenario's receivers
	lost   atomic.Int64   // events dropped because events was full
	resolved,
	requests atomic.Int64
}

// newSink returns a sink that is not yet listening. window bounds the
// messages published and not yet resolved; events can hold every attempt
// of a full window and then some, so a receiver that is briefly away (between
// phases) loses none.
func newSink(failRate float64, maxAttempts, window int) *sink {
	return &sink{
		failRate:    failRate,
		fails:       func() bool { return rand.Float64() < failRate },
		maxAttempts: max(maxAttempts, 1),
		hc:          newHTTPClient(2),
		confirmed:   make(chan struct{}),
		subscribed:  make(chan struct{}),
		attempts:    map[string]int{},
		slots:       make(chan struct{}, window),
		events:      make(chan sinkEvent, window*max(maxAttempts, 1)+4096),
	}
}

// start listens on a free loopback port.
func (s *sink) start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.url = "http://" + ln.Addr().String() + "/sink"
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return nil
}

func (s *sink) close() {
	if s.srv != nil {
		s.srv.Close()
	}
	s.hc.CloseIdleConnections()
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.Header.Get("X-Amz-Sns-Message-Type") {
	case "Notification":
		w.WriteHeader(s.notification(r.Header.Get("X-Amz-Sns-Message-Id"), body, time.Now()))
	case "SubscriptionConfirmation":
		// Confirm after answering, as a real endpoint may; fanout
		// retries the confirmation if the answer is not 2xx.
		go s.confirm(body)
	}
	// UnsubscribeConfirmation and anything else: 200.
}

// notification accounts for one notification request and returns the
// status to answer with.
func (s *sink) notification(id string, body []byte, now time.Time) int {
	s.requests.Add(1)
	fail := s.failRate > 0 && s.fails()
	out := uint8(sinkDelivered)
	s.mu.Lock()
	switch {
	case !fail:
		delete(s.attempts, id)
	case s.attempts[id]+1 >= s.maxAttempts:
		delete(s.attempts, id)
		out = sinkGaveUp
	default:
		s.attempts[id]++
		out = sinkFailed
	}
	s.mu.Unlock()
	if out != sinkFailed {
		s.resolved.Add(1)
		s.release()
	}
	ev := sinkEvent{recv: now, outcome: out}
	if out == sinkDelivered {
		ev.sent, _ = stampIn(body)
	}
	select {
	case s.events <- ev:
	default:
		s.lost.Add(1)
	}
	if fail {
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

// markSubscribed lets the sink confirm its subscription.
func (s *sink) markSubscribed() { s.subscribedOnce.Do(func() { close(s.subscribed) }) }

// confirm GETs the SubscribeURL of a SubscriptionConfirmation, once the
// Subscribe call has returned.
func (s *sink) confirm(body []byte) {
	select {
	case <-s.subscribed:
	case <-time.After(20 * time.Second):
	}
	var m struct{ SubscribeURL string }
	err := json.Unmarshal(body, &m)
	if err == nil && m.SubscribeURL == "" {
		err = errors.New("no SubscribeURL")
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var req *http.Request
		if req, err = http.NewRequestWithContext(ctx, http.MethodGet, m.SubscribeURL, nil); err == nil {
			var resp *http.Response
			if resp, err = s.hc.Do(req); err == nil {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("GET SubscribeURL: HTTP %d: %s", resp.StatusCode, b)
				}
			}
		}
	}
	if err != nil {
		msg := "confirmation: " + err.Error()
		s.confirmErr.Store(&msg)
		return
	}
	s.confirmOnce.Do(func() { close(s.confirmed) })
}

// waitConfirmed waits up to limit for the subscription to be confirmed.
func (s *sink) waitConfirmed(ctx context.Context, limit time.Duration) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-s.confirmed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	if p := s.confirmErr.Load(); p != nil {
		return errors.New(*p)
	}
	return fmt.Errorf("no SubscriptionConfirmation within %v", limit)
}

// acquire takes a window slot for one publish, waiting while the window is
// full; false if stop is done first.
func (s *sink) acquire(stop <-chan struct{}) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

// release frees a window slot: a message was resolved, or a publish failed.
func (s *sink) release() {
	select {
	case <-s.slots:
	default:
	}
}

// unresolved is how many published messages the sink still waits for.
func (s *sink) unresolved() int { return len(s.slots) }

// waitResolved waits until every published message is resolved, as long
// as some progress is made every stall and at most limit in all; it
// returns how many remain.
func (s *sink) waitResolved(ctx context.Context, stall, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	last, lastMove := s.requests.Load(), time.Now()
	for s.unresolved() > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		if n := s.requests.Load(); n != last {
			last, lastMove = n, time.Now()
		} else if time.Since(lastMove) > stall {
			break
		}
	}
	return s.unresolved()
}

// stampIn extracts the publish stamp from a delivered body: the raw message
// (ts=...;) or an SNS envelope whose Message is one.
func stampIn(body []byte) (time.Time, bool) {
	rest, ok := bytes.CutPrefix(body, []byte("ts="))
	if !ok {
		i := bytes.Index(body, []byte(`"Message"`))
		if i < 0 {
			return time.Time{}, false
		}
		rest = bytes.TrimLeft(body[i+len(`"Message"`):], " \t\r\n")
		if rest, ok = bytes.CutPrefix(rest, []byte(":")); !ok {
			return time.Time{}, false
		}
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if rest, ok = bytes.CutPrefix(rest, []byte(`"ts=`)); !ok {
			return time.Time{}, false
		}
	}
	num, _, ok := bytes.Cut(rest, []byte(";"))
	if !ok || len(num) > 19 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// expectedAttempts is the mean number of attempts per message, and the
// share of messages delivered, when each attempt fails independently with
// probability p and a message gets at most n attempts.
func expectedAttempts(p float64, n int) (attempts, delivered float64) {
	if p <= 0 {
		return 1, 1
	}
	if p >= 1 {
		return float64(n), 0
	}
	pn := math.Pow(p, float64(n))
	return (1 - pn) / (1 - p), 1 - pn
}
