package durable_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/retrypolicy"
)

// endpoints is an HTTP server standing for several subscriptions' endpoints
// (one path each): it keeps every body it is sent, and fails the attempts
// of a path while failing says so.
type endpoints struct {
	srv       *httptest.Server
	mu        sync.Mutex
	got       map[string][]string // path -> bodies, in order
	failing   map[string]bool
	failEvery int // when not 0, every failEvery-th request fails too
	requests  int
}

func newEndpoints(t *testing.T) *endpoints {
	e := &endpoints{got: map[string][]string{}, failing: map[string]bool{}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got[r.URL.Path] = append(e.got[r.URL.Path], string(b))
		e.requests++
		fail := e.failing[r.URL.Path] || e.failEvery > 0 && e.requests%e.failEvery == 0
		e.mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoints) fail(path string, on bool) {
	e.mu.Lock()
	e.failing[path] = on
	e.mu.Unlock()
}

func (e *endpoints) bodies(path string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got[path]...)
}

// dnode is one fanout life for deliveries: an op log and a dispatcher
// restored from it, on a manual clock.
type dnode struct {
	log *oplog.Log
	d   *delivery.Dispatcher
}

const pendingTopic = "arn:aws:sns:us-east-1:000000000000:t"

// bootDeliveries opens dir and restores its pending deliveries, bound to
// live subscriptions.
func bootDeliveries(t *testing.T, dir string, clk *clock.Manual) *dnode {
	t.Helper()
	n := &dnode{}
	got := durable.NewRecovered()
	var err error
	n.log, _, err = oplog.Open(dir, oplog.Options{
		Snapshot: func(emit func(k, v []byte) error) error {
			if n.d == nil {
				return errors.New("no dispatcher yet")
			}
			return durable.EmitDeliveries(n.d, emit)
		},
		Logf:         t.Logf,
		LoaderCopies: true, // as fanout opens it
	}, got.Load)
	if err != nil {
		t.Fatal(err)
	}
	n.d = delivery.New(delivery.Options{Clock: clk, Journal: durable.DeliveryJournal(n.log), Backlog: 5000})
	jobs, err := got.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	n.d.Restore(jobs, nil)
	n.d.Resume()
	t.Cleanup(func() {
		n.d.Close()
		_ = n.log.Close()
	})
	return n
}

func (n *dnode) settle(t *testing.T) {
	t.Helper()
	if err := n.d.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// publish delivers one message to subs, as a Publish does: in one fan,
// every delivery started, then waited for once.
func (n *dnode) publish(t *testing.T, id, body string, at time.Time, subs []delivery.Subscriber) {
	t.Helper()
	m := &delivery.Message{ID: id, TopicArn: pendingTopic, Timestamp: at, Body: body,
		Attributes: []delivery.Attribute{{Name: "kind", DataType: "String", StringValue: "order"}}}
	f := n.d.Fan(m)
	var waits []delivery.Waiter
	for _, s := range subs {
		w, err := f.Deliver(s)
		if err != nil {
			t.Error(err)
			return
		}
		waits = append(waits, w)
	}
	f.Close()
	for _, w := range waits {
		if err := w.Wait(); err != nil {
			t.Error(err)
			return
		}
	}
}

// rawSubs are count raw HTTP subscriptions, each to its own path of e.
func rawSubs(e *endpoints, count int) []delivery.Subscriber {
	var subs []delivery.Subscriber
	for i := range count {
		name := string(rune('a' + i))
		subs = append(subs, delivery.Subscriber{Arn: pendingTopic + ":" + name, Protocol: "http",
			Endpoint: e.srv.URL + "/" + name, Raw: true})
	}
	return subs
}

// logBytes is what the log segments of dir hold: their data, without the
// zeros a segment is preallocated with.
func logBytes(t *testing.T, dir string) int {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		total += len(bytes.TrimRight(b, "\x00"))
	}
	return total
}

// onDisk is every byte of dir's log segments and snapshots.
func onDisk(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	for _, pat := range []string{"*.wal", "*.snap"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
	}
	return all
}

// compacted compacts log and returns its snapshot's bytes.
func compacted(t *testing.T, log *oplog.Log) []byte {
	t.Helper()
	if err := log.Compact(); err != nil {
		t.Fatal(err)
	}
	snap, _ := filepath.Glob(filepath.Join(log.Dir(), "*.snap"))
	if len(snap) != 1 {
		t.Fatalf("snapshots %v", snap)
	}
	b, err := os.ReadFile(snap[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What a publish of 1 KiB to 10 HTTP subscriptions writes to the log, over
// the deliveries' whole life, and what a snapshot of such publishes pending
// holds: each body once. The figures are logged (the README has them, for
// FANOUT_PENDING_PUBLISHES=1000; 100 by default, to keep the test short).
func TestPendingDeliveriesLogAndSnapshotSize(t *testing.T) {
	publishes := 100
	if v, err := strconv.Atoi(os.Getenv("FANOUT_PENDING_PUBLISHES")); err == nil && v > 0 {
		publishes = v
	}
	clk := clock.NewManual(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	e := newEndpoints(t)
	subs := rawSubs(e, 10)
	body := strings.Repeat("x", 1024)

	dir := t.TempDir()
	n := bootDeliveries(t, dir, clk)
	before := logBytes(t, dir)
	n.publish(t, "m-ok", body, clk.Now(), subs)
	n.settle(t)
	if err := n.log.Sync(); err != nil {
		t.Fatal(err)
	}
	t.Logf("1 KiB to 10 subscriptions, delivered at once: %d bytes in all", logBytes(t, dir)-before)

	for _, s := range subs {
		e.fail(s.Endpoint[len(e.srv.URL):], true)
	}
	before = logBytes(t, dir)
	n.publish(t, "m-retried", body, clk.Now(), subs)
	n.settle(t)
	for range 3 {
		clk.Advance(20 * time.Second)
		n.settle(t)
	}
	if err := n.log.Sync(); err != nil {
		t.Fatal(err)
	}
	t.Logf("1 KiB to 10 subscriptions, 4 attempts each: %d bytes in all", logBytes(t, dir)-before)

	for i := range publishes {
		n.publish(t, fmt.Sprintf("p%04d", i), body, clk.Now(), subs)
	}
	n.settle(t)
	b := compacted(t, n.log)
	if got := bytes.Count(b, []byte(body)); got != publishes {
		t.Errorf("the snapshot holds %d bodies for %d publishes pending", got, publishes)
	}
	t.Logf("%d publishes of 1 KiB to 10 subscriptions pending: snapshot of %d bytes", publishes, len(b))

	// What the restored deliveries hold in memory.
	n.d.Close()
	if err := n.log.Close(); err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	h0 := heap()
	n = bootDeliveries(t, dir, clk)
	h1 := heap()
	if jobs, msgs := storedMessages(t, n.d); jobs != 10*publishes || msgs != publishes {
		t.Fatalf("restored %d jobs and %d messages", jobs, msgs)
	}
	t.Logf("restored: %d jobs and the heap %d bytes larger", 10*publishes, h1-h0)
	runtime.KeepAlive(n)
}

// uniqueBody is 1 KiB that appears nowhere else on disk.
func uniqueBody(tag string) string {
	return tag + strings.Repeat("."+tag, 1024/(len(tag)+1))[:1024-len(tag)]
}

// storedMessages emits d's snapshot and counts the records of each kind.
func storedMessages(t *testing.T, d *delivery.Dispatcher) (jobs, msgs int) {
	t.Helper()
	if err := durable.EmitDeliveries(d, func(k, _ []byte) error {
		switch {
		case strings.Contains(string(k), "/job/"):
			jobs++
		case strings.Contains(string(k), "/msg/"):
			msgs++
		default:
			t.Errorf("snapshot key %q", k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return jobs, msgs
}

// Pending deliveries to several HTTP subscriptions, some retrying, some
// ended, through a crash: the log and the snapshot hold each body once
// however many jobs deliver it; after the restart each delivery resumes at
// the time it was due on the clock, with the same body; once every job
// ended no body is left on disk.
func TestPendingDeliveriesRestartWithTheirBodyStoredOnce(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(t0)
	e := newEndpoints(t)
	subs := rawSubs(e, 4) // a delivers; b fails always; c and d fail at first
	for _, p := range []string{"/b", "/c", "/d"} {
		e.fail(p, true)
	}
	one, two := uniqueBody("one"), uniqueBody("two")

	dir := t.TempDir()
	n := bootDeliveries(t, dir, clk)
	n.publish(t, "m1", one, t0, subs)
	n.publish(t, "m2", two, t0, subs[:2])
	n.settle(t)
	if err := n.log.Sync(); err != nil {
		t.Fatal(err)
	}
	disk := onDisk(t, dir)
	if c1, c2 := bytes.Count(disk, []byte(one)), bytes.Count(disk, []byte(two)); c1 != 1 || c2 != 1 {
		t.Fatalf("the log holds the first body %d times (4 jobs), the second %d times (2 jobs): want each once", c1, c2)
	}
	if jobs, msgs := storedMessages(t, n.d); jobs != 4 || msgs != 2 {
		t.Fatalf("a snapshot would hold %d jobs and %d messages, want 4 (b twice, c, d) and 2", jobs, msgs)
	}

	e.fail("/d", false)
	clk.Advance(20 * time.Second) // d's second attempt delivers; b and c fail again
	n.settle(t)
	b := compacted(t, n.log)
	if c1, c2 := bytes.Count(b, []byte(one)), bytes.Count(b, []byte(two)); c1 != 1 || c2 != 1 {
		t.Fatalf("the snapshot holds the first body %d times (b and c wait), the second %d times (b waits): want each once", c1, c2)
	}
	crashed := crash(t, &node{dir: dir}, 0)
	n.d.Close()

	e.fail("/c", false)
	n2 := bootDeliveries(t, crashed, clk)
	if jobs, msgs := storedMessages(t, n2.d); jobs != 3 || msgs != 2 {
		t.Fatalf("restored %d jobs and %d messages, want 3 and 2", jobs, msgs)
	}
	before := map[string]int{}
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		before[p] = len(e.bodies(p))
	}
	clk.Advance(19 * time.Second)
	n2.settle(t)
	for p, k := range before {
		if got := len(e.bodies(p)); got != k {
			t.Fatalf("%s: %d attempts before the retries were due, want %d", p, got, k)
		}
	}
	clk.Advance(time.Second) // t0+40s: b's and c's third attempts
	n2.settle(t)
	want := map[string][]string{
		"/a": {one, two},
		"/b": {one, two, one, two, one, two},
		"/c": {one, one, one},
		"/d": {one, one},
	}
	for p, w := range want {
		got := e.bodies(p)
		// m1's and m2's deliveries to one endpoint may come in either order.
		sort.Strings(got)
		sort.Strings(w)
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("%s received %d bodies, want %d of the ones published", p, len(got), len(w))
		}
	}
	if jobs, msgs := storedMessages(t, n2.d); jobs != 2 || msgs != 2 {
		t.Fatalf("after c delivered: %d jobs and %d messages stored, want b's 2 and their 2", jobs, msgs)
	}
	clk.Advance(20 * time.Second) // b's fourth and last attempts: dropped
	n2.settle(t)
	if got := len(e.bodies("/b")); got != 8 {
		t.Fatalf("b was attempted %d times, want 4 for each message", got)
	}
	if jobs, msgs := storedMessages(t, n2.d); jobs != 0 || msgs != 0 {
		t.Fatalf("after every job ended: %d jobs and %d messages stored", jobs, msgs)
	}
	if err := n2.log.Compact(); err != nil {
		t.Fatal(err)
	}
	disk = onDisk(t, crashed)
	if c1, c2 := bytes.Count(disk, []byte(one)), bytes.Count(disk, []byte(two)); c1 != 0 || c2 != 0 {
		t.Fatalf("after every job ended and a compaction, the dir still holds the bodies %d and %d times", c1, c2)
	}
}

// batchLog is a store that keeps a copy of every batch, in the order the
// log it wraps takes them.
type batchLog struct {
	persist.Store
	mu      sync.Mutex
	batches [][]persist.Record
}

func (b *batchLog) Enqueue(batch []persist.Record) persist.Pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	cp := make([]persist.Record, len(batch))
	for i, r := range batch {
		cp[i] = persist.Record{Op: r.Op, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)}
	}
	b.batches = append(b.batches, cp)
	return b.Store.Enqueue(batch)
}

// danglingJobs applies batches in order and returns, for each batch after
// which a job names a message the store does not hold, that job's key.
func danglingJobs(t *testing.T, batches [][]persist.Record) (dangling []string, jobs, msgs int) {
	t.Helper()
	msgKeys := map[string]bool{}
	jobMsg := map[string]string{} // job key -> the key of its message
	for _, b := range batches {
		for _, r := range b {
			k := string(r.Key)
			isJob := strings.Contains(k, "/job/")
			switch r.Op {
			case persist.OpPut:
				if !isJob {
					msgKeys[k] = true
					continue
				}
				var st delivery.JobState
				if err := json.Unmarshal(r.Value[1:], &st); err != nil {
					t.Fatal(err)
				}
				if st.MessageRef == 0 {
					t.Fatalf("job %s holds its message itself", k)
				}
				jobMsg[k] = k[:strings.Index(k, "/job/")] + "/msg/" + fmt.Sprintf("%016x", st.MessageRef)
			case persist.OpDelete:
				delete(msgKeys, k)
				delete(jobMsg, k)
			case persist.OpDeletePrefix:
				for key := range msgKeys {
					if strings.HasPrefix(key, k) {
						delete(msgKeys, key)
					}
				}
				for key := range jobMsg {
					if strings.HasPrefix(key, k) {
						delete(jobMsg, key)
					}
				}
			}
		}
		for k, m := range jobMsg {
			if !msgKeys[m] {
				dangling = append(dangling, k)
			}
		}
	}
	return dangling, len(jobMsg), len(msgKeys)
}

// Publishes to several subscriptions, from several goroutines, with
// deliveries that succeed, retry and end while the clock moves and the log
// compacts: no batch leaves a job without its message (so neither does any
// crash between batches), a copy of the dir taken between compactions
// opens with every job's message, and so does the dir after a clean stop.
func TestNoBatchLeavesAJobWithoutItsMessage(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	e := newEndpoints(t)
	e.failEvery = 3
	subs := rawSubs(e, 5)
	dir := t.TempDir()
	n := bootDeliveries(t, dir, clk)
	rec := &batchLog{Store: n.log}
	n.d.Close()
	n.d = delivery.New(delivery.Options{Clock: clk, Journal: durable.DeliveryJournal(rec), Backlog: 5000})

	var copies []string
	for round := range 2 {
		stop := compactAgainAndAgain(t, n.log)
		var wg sync.WaitGroup
		for p := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 25 {
					n.publish(t, fmt.Sprintf("r%d-p%d-%d", round, p, i), uniqueBody(fmt.Sprintf("%d.%d.%d", round, p, i)), clk.Now(), subs[:1+(p+i)%len(subs)])
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				clk.Advance(7 * time.Second)
			}
		}()
		wg.Wait()
		n.settle(t)
		stop()
		copies = append(copies, crash(t, &node{dir: dir}, 0))
	}
	rec.mu.Lock()
	dangling, jobs, msgs := danglingJobs(t, rec.batches)
	batches := len(rec.batches)
	rec.mu.Unlock()
	if len(dangling) != 0 {
		t.Fatalf("%d times a batch left a job without its message, first %s", len(dangling), dangling[0])
	}
	live, liveMsgs := storedMessages(t, n.d)
	if jobs != live || msgs != liveMsgs || jobs == 0 {
		t.Fatalf("after %d batches the store holds %d jobs and %d messages; the dispatcher %d and %d", batches, jobs, msgs, live, liveMsgs)
	}
	t.Logf("%d batches; %d jobs and %d messages pending at the end", batches, jobs, msgs)
	for _, c := range copies {
		got := durable.NewRecovered()
		l, _, err := oplog.Open(c, oplog.Options{Logf: t.Logf, LoaderCopies: true}, got.Load)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := got.Deliveries(); err != nil {
			t.Error(err)
		}
		_ = l.Close()
	}
	n.d.Close()
	if err := n.log.Close(); err != nil {
		t.Fatal(err)
	}
	n2 := bootDeliveries(t, dir, clk) // fails on a job without its message
	if j, m := storedMessages(t, n2.d); j != jobs || m != msgs {
		t.Fatalf("restored %d jobs and %d messages, want %d and %d", j, m, jobs, msgs)
	}
}

// A data dir written before messages had keys of their own holds each
// job's message in the job: it is read as it is, its jobs resume and are
// rescheduled in that form, and they deliver their body.
func TestJobsHoldingTheirMessageStillResume(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(t0)
	e := newEndpoints(t)
	subs := rawSubs(e, 2)
	e.fail("/a", true)
	body := uniqueBody("old")
	dir := t.TempDir()
	log, _, err := oplog.Open(dir, oplog.Options{Logf: t.Logf}, durable.NewRecovered().Load)
	if err != nil {
		t.Fatal(err)
	}
	j := durable.DeliveryJournal(log)
	for i, s := range subs {
		// No MessageRef: as that version wrote them, each job its message.
		m := &delivery.Message{ID: "m", TopicArn: pendingTopic, Timestamp: t0, Body: body}
		st := delivery.JobState{ID: uint64(i + 1), TopicArn: pendingTopic, Message: m, SubscriptionArn: s.Arn, Protocol: s.Protocol,
			Endpoint: s.Endpoint, Raw: true, Policy: retrypolicy.Default("http"), Created: t0, Attempts: 1, Due: t0.Add(20 * time.Second)}
		if err := j.Record(delivery.Change{Jobs: []delivery.JobState{st}}).Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(onDisk(t, dir), []byte(body)); n != 2 {
		t.Fatalf("the old format holds the body %d times, want once a job", n)
	}

	n := bootDeliveries(t, dir, clk)
	clk.Advance(20 * time.Second) // a fails again, b delivers
	n.settle(t)
	if got := e.bodies("/b"); len(got) != 1 || got[0] != body {
		t.Fatalf("b received %d bodies", len(got))
	}
	if jobs, msgs := storedMessages(t, n.d); jobs != 1 || msgs != 0 {
		t.Fatalf("a snapshot would hold %d jobs and %d messages, want a's job holding its message", jobs, msgs)
	}
	if err := n.log.Compact(); err != nil {
		t.Fatal(err)
	}
	n.d.Close()
	if err := n.log.Close(); err != nil {
		t.Fatal(err)
	}
	e.fail("/a", false)
	n = bootDeliveries(t, dir, clk)
	clk.Advance(20 * time.Second)
	n.settle(t)
	if got := e.bodies("/a"); len(got) != 2 || got[1] != body { // attempts 2 and 3 (the stored job had made 1)
		t.Fatalf("a received %d bodies, want its third attempt to deliver", len(got))
	}
	if jobs, msgs := storedMessages(t, n.d); jobs != 0 || msgs != 0 {
		t.Fatalf("after both ended: %d jobs and %d messages", jobs, msgs)
	}
}
