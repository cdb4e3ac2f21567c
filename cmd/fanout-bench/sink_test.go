package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestStampIn(t *testing.T) {
	ts := time.Unix(0, 1700000000123456789)
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{"ts=1700000000123456789;abc", true},
		{"{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"x\",\n  \"Message\" : \"ts=1700000000123456789;abcdef\",\n  \"Signature\" : \"ts=\"\n}", true},
		{`{"Message":"ts=1700000000123456789;x"}`, true},
		{`{"Message":"hello ts=1;"}`, false},
		{"ts=12x;", false},
		{"ts=123", false},
		{"hello", false},
		{"ts=99999999999999999999999;", false},
	} {
		got, ok := stampIn([]byte(tc.body))
		if ok != tc.ok || (ok && !got.Equal(ts)) {
			t.Errorf("stampIn(%q) = %v, %v", tc.body, got, ok)
		}
	}
	// What stampedBody writes, stampIn reads.
	before := time.Now()
	got, ok := stampIn([]byte(stampedBody(payload(100))))
	if !ok || got.Before(before) || time.Since(got) > time.Minute {
		t.Errorf("stampedBody round trip: %v %v", got, ok)
	}
}

func TestExpectedAttempts(t *testing.T) {
	for _, tc := range []struct {
		p             float64
		n             int
		att, delivers float64
	}{
		{0, 4, 1, 1},
		{0.5, 4, 1.875, 0.9375},
		{0.5, 1, 1, 0.5},
		{1, 4, 4, 0},
	} {
		a, d := expectedAttempts(tc.p, tc.n)
		if math.Abs(a-tc.att) > 1e-12 || math.Abs(d-tc.delivers) > 1e-12 {
			t.Errorf("expectedAttempts(%g, %d) = %g, %g; want %g, %g", tc.p, tc.n, a, d, tc.att, tc.delivers)
		}
	}
}

// post sends one SNS-style request to the sink.
func post(t *testing.T, url, typ, id, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("x-amz-sns-message-type", typ)
	req.Header.Set("x-amz-sns-message-id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSinkConfirmsBySubscribeURL(t *testing.T) {
	var gets atomic.Int32
	fanout := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Query().Get("Action") != "ConfirmSubscription" || r.URL.Query().Get("Token") != "tok" {
			http.Error(w, "bad confirmation", http.StatusBadRequest)
			return
		}
		gets.Add(1)
	}))
	defer fanout.Close()
	s := newSink(0, 4, 8)
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.markSubscribed()
	ctx := context.Background()
	if err := s.waitConfirmed(ctx, 10*time.Millisecond); err == nil {
		t.Fatal("confirmed before any confirmation")
	}
	body := fmt.Sprintf(`{"Type":"SubscriptionConfirmation","Token":"tok","SubscribeURL":%q}`,
		fanout.URL+"/_fanout/sns/?Action=ConfirmSubscription&TopicArn=arn&Token=tok")
	if code := post(t, s.url, "SubscriptionConfirmation", "c1", body); code != 200 {
		t.Fatalf("confirmation answered %d", code)
	}
	if err := s.waitConfirmed(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if gets.Load() != 1 {
		t.Fatalf("%d GETs of the SubscribeURL", gets.Load())
	}

	// A SubscribeURL that fails is reported.
	s2 := newSink(0, 4, 8)
	s2.start()
	defer s2.close()
	s2.markSubscribed()
	post(t, s2.url, "SubscriptionConfirmation", "c2", fmt.Sprintf(`{"SubscribeURL":%q}`, fanout.URL+"/?Token=wrong"))
	if err := s2.waitConfirmed(ctx, 2*time.Second); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("want the failed confirmation, got %v", err)
	}
}

func TestSinkAttemptsAndWindow(t *testing.T) {
	s := newSink(0.5, 3, 2)
	var fail atomic.Bool
	s.fails = func() bool { return fail.Load() }
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	stop := make(chan struct{})
	for range 2 {
		if !s.acquire(stop) {
			t.Fatal("window of 2 refused a publish")
		}
	}
	done := make(chan bool)
	go func() { done <- s.acquire(stop) }()
	select {
	case <-done:
		t.Fatal("a full window let a third publish through")
	case <-time.After(20 * time.Millisecond):
	}

	// m1: delivered at once. m2: fails 3 times, given up on the third.
	if code := post(t, s.url, "Notification", "m1", stampedBody(payload(64))); code != 200 {
		t.Fatalf("m1: %d", code)
	}
	if !<-done {
		t.Fatal("the delivery freed no slot")
	}
	fail.Store(true)
	for i := 1; i <= 3; i++ {
		if code := post(t, s.url, "Notification", "m2", "ts=1;"); code != 500 {
			t.Fatalf("m2 attempt %d: %d", i, code)
		}
		if want := 2 - min(i/3, 1); s.unresolved() != want {
			t.Fatalf("after m2 attempt %d: %d unresolved, want %d", i, s.unresolved(), want)
		}
	}
	fail.Store(false)
	if got := s.waitResolved(context.Background(), time.Second, time.Second); got != 1 {
		t.Fatalf("%d unresolved, want 1 (the third publish)", got)
	}
	// Unsubscribe confirmations and the like are answered 200 and not counted.
	if code := post(t, s.url, "UnsubscribeConfirmation", "u", "{}"); code != 200 {
		t.Fatalf("unsubscribe confirmation: %d", code)
	}
	if s.requests.Load() != 4 || s.resolved.Load() != 2 || len(s.attempts) != 0 {
		t.Fatalf("requests %d resolved %d pending %v", s.requests.Load(), s.resolved.Load(), s.attempts)
	}

	// The events, as a phase's receiver records them.
	ph := &phase{start: time.Now().Add(-time.Minute), end: time.Now().Add(time.Minute)}
	w := &worker{ph: ph, stats: statSet{}}
	for len(s.events) > 0 {
		recordSinkEvent(w, <-s.events)
	}
	recordSinkEvent(w, sinkEvent{recv: ph.start.Add(-time.Second), outcome: sinkDelivered}) // before the phase
	a, d, g := w.stats["attempt"], w.stats["delivered"], w.stats["gave-up"]
	if a.calls != 4 || a.errors != 3 || a.messages != 1 || d.messages != 1 || d.lat.count() != 1 || g.messages != 1 {
		t.Fatalf("attempt %+v delivered %+v gave-up %+v", *a, *d, *g)
	}
	notes := sinkNotes(w.stats, 0.5, 3, 0)
	if len(notes) != 1 || !strings.Contains(notes[0], "2.000 attempts per message") || !strings.Contains(notes[0], "expect 1.750") {
		t.Fatalf("notes %q", notes)
	}
}
