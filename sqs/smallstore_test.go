package sqs

import (
	"fmt"
	"strings"
	"testing"
)

// A small queue that holds messages keeps the bodies its own chunk has no
// room for among the shared bodies; one consumed as fast as it is fed, and
// one past smallStore, keep theirs in their chunks. Every body reads back
// as sent, and deleting them gives the shared bytes back.
func TestSmallQueueKeepsBodiesShared(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	body := func(k int) string { return fmt.Sprintf("%04d", k) + strings.Repeat("s", 1020) }

	pingPong := mustQueue(t, e, "ping-pong", nil)
	for k := range 5 {
		send(t, pingPong, body(k))
		if got := drainBodies(t, pingPong); len(got) != 1 || got[0] != body(k) {
			t.Fatalf("round trip %d: %d bodies", k, len(got))
		}
		pingPong.lock()
		refs := pingPong.msgs.sharedRefs
		pingPong.unlock()
		if refs != 0 {
			t.Fatalf("round trip %d: a queue consumed as fed holds %d shared bodies", k, refs)
		}
	}

	small := mustQueue(t, e, "small", nil)
	n := 2 * smallStore / 1024
	for k := range n {
		send(t, small, body(k))
	}
	small.lock()
	refs, bytes, held := small.msgs.sharedRefs, small.msgs.sharedBytes, small.msgs.chunks.held
	small.unlock()
	if refs == 0 || refs >= n-1 || bytes != int64(refs*1024) || bytes > smallStore+1024 {
		t.Fatalf("%d messages of 1 KiB: %d shared bodies of %d bytes", n, refs, bytes)
	}
	if held > int64(n-refs)*1024*2+int64(n)*256 {
		t.Fatalf("%d messages, %d shared: chunks hold %d bytes", n, refs, held)
	}
	got := drainBodies(t, small)
	if len(got) != n {
		t.Fatalf("drained %d of %d", len(got), n)
	}
	for k, b := range got {
		if b != body(k) {
			t.Fatalf("body %d: %.8q", k, b)
		}
	}
	small.lock()
	refs, bytes = small.msgs.sharedRefs, small.msgs.sharedBytes
	small.unlock()
	if refs != 0 || bytes != 0 {
		t.Fatalf("drained: %d shared bodies of %d bytes left", refs, bytes)
	}

	// Short bodies are never worth a header and a reference.
	short := mustQueue(t, e, "short", nil)
	for range 100 {
		send(t, short, strings.Repeat("x", minShared-1))
	}
	short.lock()
	refs = short.msgs.sharedRefs
	short.unlock()
	if refs != 0 {
		t.Fatalf("%d bodies under %d bytes were shared", refs, minShared)
	}
}

// drainBodies receives and deletes every message of q, returning the bodies.
func drainBodies(t *testing.T, q *Queue) []string {
	t.Helper()
	var out []string
	for {
		got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
		if len(got) == 0 {
			return out
		}
		for _, m := range got {
			out = append(out, m.Body)
			if err := q.Delete(m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
}
