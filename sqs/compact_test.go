package sqs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Messages deleted out of order leave holes; once they pass twice what is
// live the queue rewrites itself. What it holds, and what receives handed
// out before, must come through unchanged, and receipt handles stay valid.
func TestCompactionKeepsMessagesAndHandles(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "holes", nil)
	const n = 30000
	body := func(i int) string { return fmt.Sprintf("message %d ", i) + strings.Repeat("x", 1000+i%7) }
	for i := range n {
		in := SendInput{Body: body(i), SenderID: fmt.Sprintf("AKIA%d", i%3)}
		if i%5 == 0 {
			in.Attributes = []MessageAttribute{{Name: "n", DataType: "Number", StringValue: fmt.Sprint(i)}}
		}
		if _, err := q.Send(in); err != nil {
			t.Fatal(err)
		}
	}
	all := ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(600), SystemAttributeNames: []string{"All"}, MessageAttributeNames: []string{"All"}}
	var got []Received
	for len(got) < n {
		out := receive(t, q, all)
		if len(out) == 0 {
			t.Fatalf("received %d of %d", len(got), n)
		}
		got = append(got, out...)
	}
	for i, m := range got {
		if i%3 != 0 {
			if err := q.Delete(m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	q.lock()
	slots, written, live := q.msgs.slab.n, q.msgs.chunks.written, q.msgs.chunks.live
	q.unlock()
	if slots > n/3+compactSlack || written > 2*live+compactByteSlack {
		t.Fatalf("not compacted: %d slots for %d messages, %d bytes written for %d live", slots, n/3, written, live)
	}
	for i, m := range got { // what was handed out is a copy
		if !strings.HasPrefix(m.Body, fmt.Sprintf("message %d ", i)) || m.MD5OfBody != MD5OfBody(m.Body) {
			t.Fatalf("received message %d changed: %.20q", i, m.Body)
		}
	}
	for i := 0; i < n; i += 3 { // the kept ones' handles still work
		if err := q.ChangeVisibility(got[i].ReceiptHandle, 0); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	for {
		out := receive(t, q, all)
		if len(out) == 0 {
			break
		}
		for _, m := range out {
			var i int
			fmt.Sscanf(m.Body, "message %d ", &i)
			want := got[i]
			if i%3 != 0 || m.Body != body(i) || m.MessageID != want.MessageID || m.MD5OfBody != want.MD5OfBody ||
				m.MD5OfAttrs != want.MD5OfAttrs || !reflect.DeepEqual(m.MessageAttributes, want.MessageAttributes) ||
				sysAttr(m.Attributes, SysSenderID) != fmt.Sprintf("AKIA%d", i%3) || sysAttr(m.Attributes, SysApproximateReceiveCount) != "2" {
				t.Fatalf("message %d after compaction: %+v", i, m)
			}
			if err := q.Delete(m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
			seen++
		}
	}
	if seen != (n+2)/3 {
		t.Fatalf("received %d again, want %d", seen, (n+2)/3)
	}
	q.lock()
	defer q.unlock()
	if q.msgs.slab.n > keepWhenEmpty || q.msgs.chunks.held > keepBytesWhenEmpty {
		t.Fatalf("an empty queue keeps %d slots and %d bytes", q.msgs.slab.n, q.msgs.chunks.held)
	}
}

// A compaction in any state changes nothing a client or Peek can see: FIFO
// groups, in-flight, delayed and returned messages, a receive attempt's replay.
func TestCompactionInEveryState(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	std := mustQueue(t, e, "std", map[string]string{AttrRedrivePolicy: ""})
	fifo := mustQueue(t, e, "f.fifo", map[string]string{AttrFifoQueue: "true", AttrContentBasedDeduplication: "true"})
	for i := range 40 {
		if _, err := std.Send(SendInput{Body: fmt.Sprint("s", i), DelaySeconds: ptr(i % 3 * 60), GroupID: fmt.Sprint("g", i%4),
			SystemAttributes: []MessageAttribute{{Name: "AWSTraceHeader", DataType: "String", StringValue: "Root=1"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := fifo.Send(SendInput{Body: fmt.Sprint("f", i), GroupID: fmt.Sprint("g", i%5)}); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(61 * time.Second)
	r1 := receive(t, std, ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(30)})
	receive(t, std, ReceiveInput{MaxNumberOfMessages: ptr(5), VisibilityTimeout: ptr(0)}) // received, visible again
	attempt := ReceiveInput{MaxNumberOfMessages: ptr(10), AttemptID: "a1", SystemAttributeNames: []string{"All"}}
	f1 := receive(t, fifo, attempt)
	for _, m := range r1[:3] {
		if err := std.Delete(m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []*Queue{std, fifo} {
		before, _ := q.Peek(PeekOptions{Limit: MaxPeekLimit})
		q.lock()
		q.compactRecords()
		q.compactBytes()
		q.unlock()
		after, _ := q.Peek(PeekOptions{Limit: MaxPeekLimit})
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: Peek before compaction\n%+v\nafter\n%+v", q.name, before, after)
		}
	}
	if again := receive(t, fifo, attempt); !reflect.DeepEqual(again, f1) {
		t.Fatalf("the attempt's replay changed: %+v, want %+v", again, f1)
	}
	for _, m := range append(r1[3:], f1...) {
		q := std
		if strings.HasPrefix(m.Body, "f") {
			q = fifo
		}
		if err := q.Delete(m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
}

// A queue costs what it holds: three small messages take one small page
// from Go's heap and one small chunk cut from a shared block, under 3 KiB
// together; a large queue's memory is mapped and goes back when it is
// purged.
func TestStoreMemoryFollowsContents(t *testing.T) {
	e, _ := newTestEngine(t)
	small := mustQueue(t, e, "small", nil)
	for range 3 {
		send(t, small, strings.Repeat("x", 64))
	}
	small.lock()
	pages, held, mapped := small.msgs.slab.pageCount(), small.msgs.chunks.held, small.msgs.slab.page0.mapped
	small.unlock()
	if pages != 1 || pageLen(0)*recordSize+int(held) > 3<<10 || mapped {
		t.Fatalf("3 messages: %d pages, %d chunk bytes, mapped %v", pages, held, mapped)
	}

	e.opts.NoPurgeWait = true
	big := mustQueue(t, e, "big", nil)
	settle()
	inUse := func() int64 { return offHeap.Load() - spares.held() - idlePoolBytes() } // kept for reuse
	start := inUse()
	body := strings.Repeat("y", 1024)
	for range 20000 {
		send(t, big, body)
	}
	if grown := inUse() - start; grown < 20000*1024 || grown > 2*20000*(1024+bodyAt+int64(recordSize)) {
		t.Fatalf("20,000 1 KiB messages map %d bytes", grown)
	}
	if err := big.Purge(); err != nil {
		t.Fatal(err)
	}
	if after := inUse(); after > start {
		t.Fatalf("purged, %d bytes still mapped (%d before)", after, start)
	}
}

// Past maxSenders distinct sender ids a queue keeps each in its message's
// bytes: every message still reports its own.
func TestManySenders(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "senders", nil)
	const n = maxSenders + 100
	for i := range n {
		if _, err := q.Send(SendInput{Body: fmt.Sprint(i), SenderID: fmt.Sprintf("AIDA%08d", i),
			SystemAttributes: []MessageAttribute{{Name: "AWSTraceHeader", DataType: "String", StringValue: fmt.Sprint("Root=", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	for {
		out := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10), SystemAttributeNames: []string{"All"}})
		if len(out) == 0 {
			break
		}
		for _, m := range out {
			if sysAttr(m.Attributes, SysSenderID) != "AIDA"+fmt.Sprintf("%08s", m.Body) || sysAttr(m.Attributes, SysAWSTraceHeader) != "Root="+m.Body {
				t.Fatalf("message %s: %+v", m.Body, m.Attributes)
			}
			seen++
		}
	}
	if seen != n {
		t.Fatalf("received %d of %d", seen, n)
	}
}

// A send that needs a fresh mapped chunk gets it mapped before the queue's
// lock is taken (lockWithRoom stages it), and a staged chunk never outlives
// the lock it was staged under; the messages come back whole.
func TestFreshChunksAreMappedBeforeTheLock(t *testing.T) {
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "staged", nil)
	body := strings.Repeat("z", 1024)
	batch := make([]SendBatchEntry, 10)
	for k := range batch {
		batch[k] = SendBatchEntry{ID: fmt.Sprint("m", k), SendInput: SendInput{Body: body}}
	}
	staged := 0
	for range 300 { // 3,000 messages: chunks of 256 KiB and more
		q.lock()
		c := &q.msgs.chunks
		if c.staged.b != nil {
			t.Fatal("a staged region outlived its lock")
		}
		// What SendBatch asks for: staged now if the next chunk is mapped.
		size := c.regionFor(10*(bodyAt+1024+64), bodyAt+1024+64)
		q.unlock()
		if size > 0 {
			q.lockWithRoom(10*(bodyAt+1024+64), bodyAt+1024+64, 10)
			if len(q.msgs.chunks.staged.b) != size {
				t.Fatalf("staged %d bytes, want %d", len(q.msgs.chunks.staged.b), size)
			}
			q.unlock()
			staged++
		}
		if _, failed, err := q.SendBatch(batch); err != nil || len(failed) > 0 {
			t.Fatal(err, failed)
		}
	}
	if staged == 0 {
		t.Fatal("no chunk was big enough to be staged")
	}
	for n := 0; n < 3000; {
		out := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
		if len(out) == 0 {
			t.Fatalf("%d messages received, want 3000", n)
		}
		for _, m := range out {
			if m.Body != body || m.MD5OfBody != MD5OfBody(body) {
				t.Fatalf("message %d: %d bytes, MD5 %s", n, len(m.Body), m.MD5OfBody)
			}
		}
		n += len(out)
	}
}

// Slots map onto the pages one after another: each page holds pageLen of
// them, in order, and the next page starts where it ends.
func TestLocateFillsPagesInOrder(t *testing.T) {
	t.Parallel()
	var page, at uint32
	for i := uint32(0); i < 5*pageRecs; i++ {
		p, o := locate(i)
		if i > 0 {
			if at+1 < uint32(pageLen(int(page))) {
				at++
			} else {
				page, at = page+1, 0
			}
		}
		if p != page || o != at {
			t.Fatalf("slot %d: page %d at %d, want page %d at %d", i, p, o, page, at)
		}
	}
	if pageLen(0) != firstRecs || pageLen(smallPages) != pageRecs/2 || pageLen(smallPages+1) != pageRecs {
		t.Fatalf("page lengths %d, %d, %d", pageLen(0), pageLen(smallPages), pageLen(smallPages+1))
	}
}

// A send whose record needs a fresh mapped page gets it mapped before the
// queue's lock is taken too, and the page alloc adds is the staged one.
func TestFreshRecordPagesAreMappedBeforeTheLock(t *testing.T) {
	var s slab
	for range pageRecs { // pages 0 to smallPages: at most 192 KiB, on Go's heap or mapped under the lock
		s.alloc()
	}
	n := s.pageFor(3)
	if n != pageRecs*recordSize || n < bigRegion {
		t.Fatalf("pageFor: %d, want %d", n, pageRecs*recordSize)
	}
	page := allocRegion(n, true)
	s.stage(page)
	if s.pageFor(3) != 0 {
		t.Fatal("a page is staged, yet pageFor asks for another")
	}
	s.alloc()
	if last := s.pages[len(s.pages)-1]; unsafe.SliceData(last.b) != unsafe.SliceData(page.b) || s.staged.b != nil {
		t.Fatal("alloc did not add the staged page")
	}
	s.reset()

	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "staged-pages", nil)
	batch := make([]SendBatchEntry, 10)
	for k := range batch {
		batch[k] = SendBatchEntry{ID: fmt.Sprint("m", k), SendInput: SendInput{Body: fmt.Sprint("body ", k)}}
	}
	staged := 0
	for range 1000 { // 10,000 records: two pages of pageRecs past the small ones
		q.lock()
		if q.msgs.slab.staged.b != nil {
			t.Fatal("a staged page outlived its lock")
		}
		want := q.msgs.slab.pageFor(len(batch))
		q.unlock()
		if want >= bigRegion {
			q.lockWithRoom(10*(bodyAt+6+64), bodyAt+6+64, len(batch))
			if len(q.msgs.slab.staged.b) != want {
				t.Fatalf("staged %d bytes, want %d", len(q.msgs.slab.staged.b), want)
			}
			q.unlock()
			staged++
		}
		if _, failed, err := q.SendBatch(batch); err != nil || len(failed) > 0 {
			t.Fatal(err, failed)
		}
	}
	if staged != 2 {
		t.Fatalf("%d pages staged, want 2", staged)
	}
	for n := 0; n < 10000; {
		out := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
		if len(out) == 0 {
			t.Fatalf("%d messages received, want 10000", n)
		}
		for _, m := range out {
			if !strings.HasPrefix(m.Body, "body ") || m.MD5OfBody != MD5OfBody(m.Body) {
				t.Fatalf("message %d: %q, MD5 %s", n, m.Body, m.MD5OfBody)
			}
		}
		n += len(out)
	}
}
