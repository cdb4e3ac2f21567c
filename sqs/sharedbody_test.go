package sqs

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
)

// The tests of shared bodies are not parallel: they read the process-wide
// pool's counters, which only they move.

// sharedText is body k of n bytes (n ≥ minShared).
func sharedText(k, n int) string {
	p := fmt.Sprintf("body %d ", k)
	return p + strings.Repeat(string(rune('a'+k%26)), n-len(p))
}

var sharedAttrs = []MessageAttribute{{Name: "kind", DataType: "String", StringValue: "order"}}

// fanTo sends body to every queue as fanout's SNS does for raw deliveries.
func fanTo(t *testing.T, body string, qs ...*Queue) {
	t.Helper()
	sb := ShareBody(body)
	defer sb.Release()
	for _, q := range qs {
		if _, err := q.SendNoReply(SendInput{Body: body, BodyMD5: MD5OfBody(body), Attributes: sharedAttrs, SenderID: "AIDASNS", Shared: sb}); err != nil {
			t.Fatal(err)
		}
	}
}

// drainAll receives and deletes every message of q, checking each against
// the bodies sent (by prefix), and returns the bodies in order.
func drainAll(t *testing.T, q *Queue) []string {
	t.Helper()
	var out []string
	for {
		got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10), MessageAttributeNames: []string{"All"}, SystemAttributeNames: []string{"All"}})
		if len(got) == 0 {
			return out
		}
		for _, m := range got {
			checkShared(t, m)
			out = append(out, m.Body)
			if err := q.Delete(m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func checkShared(t *testing.T, m Received) {
	t.Helper()
	if m.MD5OfBody != MD5OfBody(m.Body) {
		t.Fatalf("MD5OfBody %s of %.20q", m.MD5OfBody, m.Body)
	}
	if len(m.MessageAttributes) != 1 || m.MessageAttributes[0].StringValue != "order" || m.MD5OfAttrs != MD5OfAttributes(sharedAttrs) {
		t.Fatalf("attributes %+v, MD5 %s", m.MessageAttributes, m.MD5OfAttrs)
	}
	var sender string
	for _, a := range m.Attributes {
		if a.Name == SysSenderID {
			sender = a.Value
		}
	}
	if sender != "AIDASNS" {
		t.Fatalf("SenderId %q", sender)
	}
}

func sharedLive() int64 { return sharedBodies.live.Load() }

// settle collects the queues that earlier tests dropped holding messages,
// whose cleanups give back their mapped memory and shared references,
// until a collection frees nothing more: the process-wide counters a test
// takes as its baseline would otherwise fall under it.
func settle() {
	last := [2]int64{offHeap.Load(), sharedLive()}
	for range 100 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond) // cleanups run on a goroutine of the runtime's
		cur := [2]int64{offHeap.Load(), sharedLive()}
		if cur == last {
			return
		}
		last = cur
	}
}

// settledShared is the live shared bytes once settled.
func settledShared() int64 {
	settle()
	return sharedLive()
}

// One publish's body fanned out to three queues is stored once, each queue
// answers it whole with its own id, MD5 and attributes, and it is freed
// when the last queue deletes it.
func TestSharedBodyIsStoredOnce(t *testing.T) {
	e, clk := newTestEngine(t)
	a, b, c := mustQueue(t, e, "a", nil), mustQueue(t, e, "b", nil), mustQueue(t, e, "c", nil)
	base := settledShared()
	const n, size = 300, 1024
	var want []string
	for k := range n {
		want = append(want, sharedText(k, size))
		fanTo(t, want[k], a, b, c)
	}
	if got := sharedLive() - base; got != n*sharedSize(size) {
		t.Fatalf("shared bytes %d, want one copy of each body: %d", got, n*sharedSize(size))
	}
	// A small body is copied, as sharing it would cost what it saves.
	fanTo(t, sharedText(0, minShared-1), a, b)
	if got := sharedLive() - base; got != n*sharedSize(size) {
		t.Fatalf("a body of %d bytes was shared", minShared-1)
	}
	want = append(want, sharedText(0, minShared-1))
	ids := map[string]bool{}
	for _, q := range []*Queue{a, b} {
		got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(1)})
		if ids[got[0].MessageID] {
			t.Fatal("two queues gave one message the same id")
		}
		ids[got[0].MessageID] = true
	}
	clk.Advance(time.Minute) // the two received are visible again
	for i, q := range []*Queue{a, b, c} {
		got := drainAll(t, q)
		if i == 2 {
			want = want[:n] // c had no small body
		}
		sort.Strings(got)
		w := slices.Clone(want)
		sort.Strings(w)
		if !slices.Equal(got, w) {
			t.Fatalf("queue %s gave %d messages, want %d (or other bodies)", q.Name(), len(got), len(w))
		}
		if left := sharedLive() - base; i < 2 && left != n*sharedSize(size) {
			t.Fatalf("after queue %d deleted its copies, shared bytes %d", i, left)
		}
	}
	if left := sharedLive() - base; left != 0 {
		t.Fatalf("%d shared bytes left after every queue deleted them", left)
	}
}

// Purge, DeleteQueue and a queue dropped with its engine give their
// references back.
func TestSharedBodyReferencesGoWithTheirQueue(t *testing.T) {
	base := settledShared()
	e, _ := newTestEngine(t)
	a, b := mustQueue(t, e, "a", nil), mustQueue(t, e, "b", nil)
	for k := range 50 {
		fanTo(t, sharedText(k, 2000), a, b)
	}
	if err := a.Purge(); err != nil {
		t.Fatal(err)
	}
	if got := sharedLive() - base; got != 50*sharedSize(2000) {
		t.Fatalf("after a purge of one queue, shared bytes %d", got)
	}
	if err := e.DeleteQueue("b"); err != nil {
		t.Fatal(err)
	}
	b.lock()
	refs := b.msgs.sharedRefs
	b.unlock()
	if refs != 0 {
		t.Errorf("a deleted queue still holds %d shared references", refs)
	}
	if got := sharedLive() - base; got != 0 {
		t.Fatalf("after DeleteQueue, shared bytes %d", got)
	}

	func() {
		dropped := New(Options{Clock: clock.NewManual(epoch)})
		q, _ := dropped.CreateQueue("left", nil, nil)
		for k := range 5 {
			fanTo(t, sharedText(k, 300), q)
		}
	}()
	for range 500 {
		if sharedLive() == base {
			return
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on a goroutine of the runtime's
	}
	t.Fatalf("a dropped queue kept %d shared bytes", sharedLive()-base)
}

// Compaction, a move to a dead-letter queue and a restore from the journal
// keep every byte of a shared message.
func TestSharedBodySurvivesCompactionMovesAndRestore(t *testing.T) {
	base := settledShared()
	j := newMemJournal()
	clk := clock.NewManual(epoch)
	e := New(Options{Clock: clk, Journal: j})
	t.Cleanup(e.Close)
	dlq := mustQueue(t, e, "dlq", nil)
	src := mustQueue(t, e, "src", nil)
	if err := src.SetAttributes(redriveTo(dlq, 1)); err != nil {
		t.Fatal(err)
	}
	other := mustQueue(t, e, "other", nil)
	for k := range 400 {
		fanTo(t, sharedText(k, 512+k), src, other)
	}
	// Out-of-order deletes, then both kinds of compaction.
	for _, m := range receive(t, other, ReceiveInput{MaxNumberOfMessages: ptr(10)}) {
		if err := other.Delete(m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	other.lock()
	other.compactRecords()
	other.compactBytes()
	other.unlock()
	// Received once, then again: the second receive moves it to the DLQ.
	first := receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(1), VisibilityTimeout: ptr(0)})
	receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(30)})
	moved := receive(t, dlq, ReceiveInput{MaxNumberOfMessages: ptr(10), MessageAttributeNames: []string{"All"}, SystemAttributeNames: []string{"All"}})
	if len(moved) != 1 || moved[0].MessageID != first[0].MessageID || moved[0].Body != first[0].Body {
		t.Fatalf("dead-lettered %+v, want %s", moved, first[0].MessageID)
	}
	checkShared(t, moved[0])

	// The journal holds whole bodies: a restore from it shows what
	// memory shows, with every body copied into its own queue.
	r := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(r.Close)
	before := sharedLive()
	if err := r.Restore(j.state()); err != nil {
		t.Fatal(err)
	}
	if sharedLive() != before {
		t.Error("a restore made shared bodies")
	}
	sameObserved(t, "restored from the journal", observe(t, r), observe(t, e))
	d := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(d.Close)
	if err := d.Restore(dumpState(t, e)); err != nil {
		t.Fatal(err)
	}
	sameObserved(t, "restored from a dump", observe(t, d), observe(t, e))
	clk.Advance(time.Minute)
	if got := len(drainAll(t, other)); got != 390 {
		t.Fatalf("other held %d after compaction, want 390", got)
	}
	for _, n := range []string{"src", "dlq"} {
		if err := e.DeleteQueue(n); err != nil {
			t.Fatal(err)
		}
	}
	if left := sharedLive() - base; left != 0 {
		t.Fatalf("%d shared bytes left", left)
	}
}

// A queue that keeps one body in a hundred, while the others are drained,
// would pin every chunk; evacuation copies its bodies out, and the chunks
// go back.
func TestSharedBodyEvacuationFreesSparseChunks(t *testing.T) {
	e, _ := newTestEngine(t)
	other, _ := newTestEngine(t) // an evacuation visits the queues of every engine
	busy, slow := mustQueue(t, e, "busy", nil), mustQueue(t, other, "slow", nil)
	baseLive := settledShared()
	baseHeld, evacs := sharedBodies.held.Load(), sharedBodies.evacs.Load()
	const n, size = 40_000, 1000
	for k := range n {
		if k%100 == 0 {
			fanTo(t, sharedText(k, size), busy, slow)
		} else {
			fanTo(t, sharedText(k, size), busy)
		}
	}
	// Every body once; the first ones may fill the chunk an earlier test
	// left half used, which baseHeld counts already.
	if live := sharedLive() - baseLive; live != n*sharedSize(size) {
		t.Fatalf("shared bodies hold %d live bytes for %d bodies, want %d", live, n, n*sharedSize(size))
	}
	if held := sharedBodies.held.Load() - baseHeld; held < n*size-sharedChunkSize {
		t.Fatalf("shared chunks hold %d bytes for %d bodies", held, n)
	}
	drainAll(t, busy)
	for sharedBodies.evacuating.Load() {
		time.Sleep(time.Millisecond) // the evacuation runs on its own goroutine
	}
	if sharedBodies.evacs.Load() == evacs {
		t.Fatal("no evacuation ran")
	}
	live := sharedLive() - baseLive
	held := sharedBodies.held.Load() - baseHeld
	if held > 2*live+sharedSlack {
		t.Fatalf("after evacuation the chunks hold %d bytes for %d live", held, live)
	}
	got := drainAll(t, slow)
	if len(got) != n/100 {
		t.Fatalf("the slow queue gave %d messages, want %d", len(got), n/100)
	}
	for _, b := range got {
		var k int
		fmt.Sscanf(b, "body %d ", &k)
		if b != sharedText(k, size) {
			t.Fatalf("body %d changed: %.30q", k, b)
		}
	}
	if left := sharedLive() - baseLive; left != 0 {
		t.Fatalf("%d shared bytes left", left)
	}
}

// FIFO queues share a body too; a duplicate within the deduplication
// window stores nothing and keeps no reference.
func TestSharedBodyInFifoQueues(t *testing.T) {
	e, _ := newTestEngine(t)
	fifo := map[string]string{AttrFifoQueue: "true"}
	a, b := mustQueue(t, e, "a.fifo", fifo), mustQueue(t, e, "b.fifo", fifo)
	base := settledShared()
	body := sharedText(7, 4000)
	for range 2 { // the second time a duplicate
		sb := ShareBody(body)
		for _, q := range []*Queue{a, b} {
			if _, err := q.SendNoReply(SendInput{Body: body, BodyMD5: MD5OfBody(body), GroupID: "g", DeduplicationID: "d", Shared: sb}); err != nil {
				t.Fatal(err)
			}
		}
		sb.Release()
		if got := sharedLive() - base; got != sharedSize(len(body)) {
			t.Fatalf("shared bytes %d, want one copy", got)
		}
	}
	for _, q := range []*Queue{a, b} {
		got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10), SystemAttributeNames: []string{"All"}})
		if len(got) != 1 || got[0].Body != body || got[0].MD5OfBody != MD5OfBody(body) {
			t.Fatalf("%s gave %d messages", q.Name(), len(got))
		}
		if err := q.Delete(got[0].ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	if left := sharedLive() - base; left != 0 {
		t.Fatalf("%d shared bytes left", left)
	}
}

// A restore with ShareBodiesOf stores the fanned-out bodies of that sender
// once again, as they were before the store kept a copy per queue; other
// senders' bodies, short bodies and bodies of the same hash but other
// bytes are copied. What the restored engine answers is what the first did.
func TestSharedBodyRestoredOnce(t *testing.T) {
	j := newMemJournal()
	clk := clock.NewManual(epoch)
	e := New(Options{Clock: clk, Journal: j})
	t.Cleanup(e.Close)
	qs := []*Queue{mustQueue(t, e, "a", nil), mustQueue(t, e, "b", nil), mustQueue(t, e, "c", nil)}
	const n, size = 100, 700
	for k := range n {
		fanTo(t, sharedText(k, size), qs...)
	}
	fanTo(t, sharedText(0, minShared-1), qs...)
	if _, err := qs[0].Send(SendInput{Body: sharedText(1, size), SenderID: "AIDAOTHER"}); err != nil {
		t.Fatal(err)
	}
	receive(t, qs[1], ReceiveInput{MaxNumberOfMessages: ptr(3)}) // some in flight

	for _, from := range []struct {
		what string
		st   State
	}{{"the journal", j.state()}, {"a dump", dumpState(t, e)}} {
		base := settledShared()
		r := New(Options{Clock: clock.NewManual(clk.Now())})
		res := NewRestorer()
		res.ShareBodiesOf("AIDASNS")
		if err := r.restoreWith(res, from.st); err != nil {
			t.Fatal(err)
		}
		if got := sharedLive() - base; got != n*sharedSize(size) {
			t.Errorf("restored from %s: shared bytes %d, want one copy of each of %d bodies (%d)", from.what, got, n, n*sharedSize(size))
		}
		sameObserved(t, "restored from "+from.what, observe(t, r), observe(t, e))
		for _, name := range []string{"a", "b", "c"} {
			if err := r.DeleteQueue(name); err != nil {
				t.Fatal(err)
			}
		}
		if left := sharedLive() - base; left != 0 {
			t.Errorf("restored from %s: %d shared bytes left after DeleteQueue", from.what, left)
		}
		r.Close()
	}
	// Without ShareBodiesOf (Engine.Restore), every body is copied.
	base := settledShared()
	r := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(r.Close)
	if err := r.Restore(j.state()); err != nil {
		t.Fatal(err)
	}
	if sharedLive() != base {
		t.Error("Engine.Restore shared bodies")
	}
}
