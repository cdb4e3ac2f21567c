package sqs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fanout/fanout/clock"
)

// A queue big enough for full record pages and 1 MiB chunks, the memory a
// Restorer maps ahead, comes back whole: every message, with its body, in
// its order.
func TestRestoreOfABigQueueMapsAheadAndKeepsEveryMessage(t *testing.T) {
	t.Parallel()
	e, clk := newTestEngine(t)
	q := mustQueue(t, e, "big", nil)
	const n = 6000 // past the 4,096 records of the small pages, 6 MB of bodies
	pad := strings.Repeat("b", 1000)
	entries := make([]SendBatchEntry, 10)
	for k := 0; k < n; k += len(entries) {
		for i := range entries {
			entries[i] = SendBatchEntry{ID: fmt.Sprint("e", i), SendInput: SendInput{Body: fmt.Sprint(k+i, pad)}}
		}
		if _, failed, err := q.SendBatch(entries); err != nil || len(failed) > 0 {
			t.Fatalf("SendBatch: %v %v", failed, err)
		}
	}
	st := dumpState(t, e)
	r := NewRestorer()
	r.Queue(st.Queues[0])
	for _, m := range st.Messages {
		if err := r.Message(m); err != nil {
			t.Fatal(err)
		}
	}
	if r.chunksAhead == nil || r.pagesAhead == nil {
		t.Fatalf("a queue of %d messages did not map ahead (chunks %v, pages %v)", n, r.chunksAhead != nil, r.pagesAhead != nil)
	}
	restored := New(Options{Clock: clock.NewManual(clk.Now())})
	t.Cleanup(restored.Close)
	if err := r.Into(restored); err != nil {
		t.Fatal(err)
	}
	r.Discard() // after Into, as a store's recovery does: nothing left to free
	rq, _ := restored.Queue("big")
	for k := 0; k < n; {
		got := receive(t, rq, ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(100)})
		if len(got) == 0 {
			t.Fatalf("the restored queue ran out after %d of %d messages", k, n)
		}
		for _, m := range got {
			if want := fmt.Sprint(k, pad); m.Body != want {
				t.Fatalf("message %d: body %.20q…, want %.20q…", k, m.Body, want)
			}
			k++
		}
	}
}
