package delivery

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/retrypolicy"
)

// fakeEndpoint fails every attempt with a server-side error (or succeeds,
// once ok is set) and can hold attempts until released.
type fakeEndpoint struct {
	isRemote bool
	ok       atomic.Bool
	attempts atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	hold     chan struct{} // nil: do not wait
	started  chan struct{} // nil: do not tell
}

func (f *fakeEndpoint) remote(*Dispatcher) bool { return f.isRemote }

func (f *fakeEndpoint) attempt(*Dispatcher, *job) result {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	f.attempts.Add(1)
	if f.started != nil {
		select {
		case f.started <- struct{}{}:
		default:
		}
	}
	if f.hold != nil {
		<-f.hold
	}
	if f.ok.Load() {
		return ok()
	}
	return serverErr("down")
}

func fakeDispatcher(clk clock.Clock, ep endpoint, workers int) *Dispatcher {
	d := New(Options{Clock: clk, Signer: &fakeSigner{}, Workers: workers, Links: Links{
		Base: func() string { return "http://localhost" }, CertFile: func() (string, error) { return "c.pem", nil },
	}})
	d.endpoints["fake"] = ep
	return d
}

func settle(t testing.TB, d *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Settle(ctx); err != nil {
		t.Fatal(err)
	}
}

func httpPolicy() *retrypolicy.Policy {
	p := retrypolicy.Default("http")
	return &p
}

func TestTenThousandPendingRetriesRunWhenTheClockMoves(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(time.Unix(1700000000, 0))
	ep := &fakeEndpoint{}
	d := fakeDispatcher(clk, ep, 0)
	goroutines := runtime.NumGoroutine()
	const n = 10000
	for i := 0; i < n; i++ {
		m := &Message{ID: fmt.Sprint(i), TopicArn: topicArn, Timestamp: clk.Now(), Body: "x", SignatureVersion: "1"}
		_ = d.Deliver(m, Subscriber{Arn: fmt.Sprint("s", i%10), Protocol: "fake", Policy: httpPolicy()})
	}
	if got := d.Scheduled(); got != n {
		t.Fatalf("%d scheduled, want %d", got, n)
	}
	if g := runtime.NumGoroutine(); g > goroutines+5 {
		t.Fatalf("%d goroutines for %d pending retries (had %d)", g, n, goroutines)
	}
	clk.Advance(20 * time.Second)
	if got := ep.attempts.Load(); got != 2*n {
		t.Fatalf("%d attempts after 20 s, want %d", got, 2*n)
	}
	ep.ok.Store(true)
	clk.Advance(20 * time.Second)
	if s := d.Stats(); s.Delivered != n || s.Scheduled != 0 || clk.Pending() != 0 {
		t.Fatalf("stats %+v, %d timers", s, clk.Pending())
	}
	recs := d.Records(Query{Status: StatusDelivered, Limit: 3})
	if len(recs) != 3 || recs[0].AttemptCount != 3 || !recs[0].Attempts[2].Time.Equal(time.Unix(1700000040, 0)) {
		t.Fatalf("records %+v", recs)
	}
}

func TestThePoolBoundsAttemptsInProgress(t *testing.T) {
	t.Parallel()
	ep := &fakeEndpoint{isRemote: true, hold: make(chan struct{})}
	ep.ok.Store(true)
	d := fakeDispatcher(clock.NewManual(time.Unix(0, 0)), ep, 4)
	for i := 0; i < 50; i++ {
		m := &Message{ID: fmt.Sprint(i), Body: "x"}
		if err := d.Deliver(m, Subscriber{Arn: "s", Protocol: "fake"}); err != nil {
			t.Fatal(err)
		}
	}
	close(ep.hold)
	settle(t, d)
	if ep.maxSeen.Load() > 4 || ep.attempts.Load() != 50 || d.Stats().Delivered != 50 {
		t.Fatalf("max %d at once, %d attempts, stats %+v", ep.maxSeen.Load(), ep.attempts.Load(), d.Stats())
	}
}

func TestSettleWaitsOnlyForWorkAlreadyDue(t *testing.T) {
	t.Parallel()
	ep := &fakeEndpoint{isRemote: true, hold: make(chan struct{})}
	ep.ok.Store(true)
	d := fakeDispatcher(clock.NewManual(time.Unix(0, 0)), ep, 2)
	_ = d.Deliver(&Message{ID: "1"}, Subscriber{Arn: "s", Protocol: "fake"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Settle(ctx); err == nil {
		t.Fatal("Settle returned while an attempt was held")
	}
	close(ep.hold)
	settle(t, d)
	if d.Stats().Delivered != 1 {
		t.Fatalf("stats %+v", d.Stats())
	}
}

func TestClockMovedDuringAnAttemptKeepsTheSchedule(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	clk := clock.NewManual(t0)
	ep := &fakeEndpoint{isRemote: true, hold: make(chan struct{}), started: make(chan struct{}, 1)}
	d := fakeDispatcher(clk, ep, 2)
	_ = d.Deliver(&Message{ID: "m", Body: "x"}, Subscriber{Arn: "s", Protocol: "fake", Policy: httpPolicy()})
	<-ep.started
	clk.Advance(time.Minute) // while the first attempt is still out
	close(ep.hold)
	settle(t, d)
	r := d.Records(Query{})[0]
	if r.Status != StatusDropped || r.AttemptCount != 4 {
		t.Fatalf("record %+v", r)
	}
	for i, a := range r.Attempts {
		if want := t0.Add(time.Duration(i) * 20 * time.Second); !a.Time.Equal(want) {
			t.Errorf("attempt %d at %v, want %v", i+1, a.Time.Sub(t0), want.Sub(t0))
		}
	}
}

func TestRecordsKeepTheNewest(t *testing.T) {
	t.Parallel()
	rs := newRecords(3, 0)
	for i := 0; i < 5; i++ {
		rs.add(&Record{MessageID: fmt.Sprint(i), Status: StatusPending})
	}
	got := rs.page(Query{}).Records
	if len(got) != 3 || got[0].MessageID != "4" || got[2].MessageID != "2" {
		t.Fatalf("records %+v", got)
	}
	r := &Record{}
	for i := 0; i < keptAttempts+10; i++ {
		rs.attempt(r, Attempt{Number: i + 1}, StatusRetrying)
	}
	if r.AttemptCount != keptAttempts+10 || len(r.Attempts) != keptAttempts || r.Attempts[0].Number != 11 {
		t.Fatalf("record keeps %d attempts from %d", len(r.Attempts), r.Attempts[0].Number)
	}
}

func TestInvokeURL(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"http://127.0.0.1:9000":       "http://127.0.0.1:9000/2015-03-31/functions/f/invocations",
		"http://127.0.0.1:9000/":      "http://127.0.0.1:9000/2015-03-31/functions/f/invocations",
		"http://127.0.0.1:9000/hooks": "http://127.0.0.1:9000/hooks",
	} {
		if got := InvokeURL(base, "f"); got != want {
			t.Errorf("InvokeURL(%s) = %s, want %s", base, got, want)
		}
	}
	if lambdaFunction("arn:aws:lambda:us-east-1:1:function:f:live") != "f" {
		t.Error("qualified ARN")
	}
}

// BenchmarkPendingRetryMemory reports the heap each pending HTTP retry
// holds: its job, its record and its clock timer.
func BenchmarkPendingRetryMemory(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		clk := clock.NewManual(time.Unix(0, 0))
		d := fakeDispatcher(clk, &fakeEndpoint{}, 0)
		msgs := make([]*Message, n)
		for k := range msgs {
			msgs[k] = &Message{ID: fmt.Sprint(k), TopicArn: topicArn, Body: "x"}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for _, m := range msgs {
			_ = d.Deliver(m, Subscriber{Arn: "s", Protocol: "fake", Policy: httpPolicy()})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if d.Scheduled() != n {
			b.Fatalf("%d scheduled", d.Scheduled())
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/retry")
		runtime.KeepAlive(d)
	}
}

// BenchmarkHTTPDelivery measures notifications delivered per second to a
// local endpoint that answers 200 at once.
func BenchmarkHTTPDelivery(b *testing.B) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer srv.Close()
	// A backlog of b.N: the loop outruns the endpoint, and overflowed
	// deliveries would not reach it.
	d := New(Options{Clock: clock.NewAdjustable(), Signer: &fakeSigner{}, Backlog: b.N + 1, Links: Links{
		Base: func() string { return "http://localhost" }, CertFile: func() (string, error) { return "c.pem", nil },
	}})
	defer d.Close()
	sub := Subscriber{Arn: subArn, Protocol: "http", Endpoint: srv.URL, Policy: httpPolicy()}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m := &Message{ID: fmt.Sprint(i), TopicArn: topicArn, Timestamp: time.Now(), Body: "hello", SignatureVersion: "1"}
		_ = d.Deliver(m, sub)
	}
	settle(b, d)
	b.StopTimer()
	if got.Load() != int64(b.N) {
		b.Fatalf("endpoint got %d of %d", got.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
