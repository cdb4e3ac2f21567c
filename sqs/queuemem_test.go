package sqs

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// A queue is few objects for the collector: no maps until their first
// entry, no cleanup until its store holds memory outside Go's heap (a piece
// of a shared block, past its first chunk or record page), and one table of sender ids
// without a map for the few most queues have.
func TestSmallQueueKeepsFewObjects(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "small", nil)
	if q.tags != nil || q.handles != nil || q.cleanup || q.Name() != "small" || !strings.HasSuffix(q.Arn(), ":small") {
		t.Fatalf("a new queue: tags %v, handles %v, cleanup %v, name %q, arn %q", q.tags, q.handles, q.cleanup, q.Name(), q.Arn())
	}
	for i := range 3 * fewSenders {
		if _, err := q.Send(SendInput{Body: "x", SenderID: fmt.Sprintf("AIDA%d", i%(fewSenders+1))}); err != nil {
			t.Fatal(err)
		}
		q.lock()
		if q.cleanup != q.msgs.pooled() || q.cleanup && q.msgs.chunks.slots < 2 && q.msgs.slab.pageCount() < 2 {
			t.Errorf("message %d: cleanup %v with %d chunks and %d record pages, pooled %v", i, q.cleanup, q.msgs.chunks.slots, q.msgs.slab.pageCount(), q.msgs.pooled())
		}
		q.unlock()
	}
	q.lock()
	if q.msgs.sendersKnown() != fewSenders+1 || q.msgs.byName == nil {
		t.Errorf("after %d senders: senders %d, map %v", fewSenders+1, q.msgs.sendersKnown(), q.msgs.byName != nil)
	}
	q.unlock()
	ten := 10
	got, err := q.Receive(context.Background(), ReceiveInput{MaxNumberOfMessages: &ten, SystemAttributeNames: []string{"SenderId"}})
	if err != nil || len(got) != 10 {
		t.Fatalf("receive: %d, %v", len(got), err)
	}
	for i, m := range got {
		if want := fmt.Sprintf("AIDA%d", i%(fewSenders+1)); len(m.Attributes) != 1 || m.Attributes[0].Value != want {
			t.Fatalf("message %d: attributes %v, want SenderId %s", i, m.Attributes, want)
		}
	}
	if q.handles == nil {
		t.Errorf("received messages have no handles")
	}
	if err := q.Tag(map[string]string{"team": "a"}); err != nil || q.Tags()["team"] != "a" {
		t.Fatalf("tag: %v %v", err, q.Tags())
	}

	// A queue grown past the smallest mapped region gets its cleanup.
	big := mustQueue(t, e, "big", nil)
	body := strings.Repeat("b", 1024)
	for range 2 * bigRegion / 1024 {
		send(t, big, body)
	}
	big.lock()
	if !big.cleanup {
		t.Errorf("a queue holding %d bytes has no cleanup", big.msgs.chunks.held)
	}
	big.unlock()
}

// Every cycle of the collector visits each object of each queue: a
// standard queue holding a message is four objects (the queue, its store,
// its ARN, and its first record page with its first chunk; the ready ring
// starts in the queue), not nine. Not parallel, so that the heap's object
// count is this test's.
func TestQueueWithAMessageIsFourObjects(t *testing.T) {
	e, _ := newTestEngine(t)
	const n = 2000
	queues := make([]*Queue, n)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapObjects
	for i := range queues {
		queues[i] = mustQueue(t, e, fmt.Sprintf("q%d", i), nil)
		send(t, queues[i], "hello")
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	// The engine's map of queues is a few more objects in all (its name
	// is the end of its ARN, and the map's key).
	if per := float64(ms.HeapObjects-before) / n; per > 4.5 {
		t.Errorf("%.2f heap objects per queue holding a message, want 4", per)
	}
	runtime.KeepAlive(queues)
}
