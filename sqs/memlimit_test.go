package sqs

import (
	"math"
	"testing"
)

// TestSendsRefusedNearMemoryLimit: with the live heap past three quarters of
// the runtime's memory limit, Send and SendBatch answer RequestThrottled and
// store nothing; receives and deletes still work; below it, sends succeed.
func TestSendsRefusedNearMemoryLimit(t *testing.T) {
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "full", nil)
	send(t, q, "before")

	limit, live := int64(1000), uint64(751)
	mapped := uint64(0)
	oldLimit, oldLive, oldMapped := memoryLimit, liveHeap, mappedStore
	memoryLimit, liveHeap = func() int64 { return limit }, func() uint64 { return live }
	mappedStore = func() uint64 { return mapped }
	recheck := func() { storeGuard.next.Store(0) }
	t.Cleanup(func() { memoryLimit, liveHeap, mappedStore = oldLimit, oldLive, oldMapped; recheck() })
	recheck()

	if _, err := q.Send(SendInput{Body: "x"}); code(err) != "RequestThrottled" {
		t.Fatalf("Send near the limit: %v", err)
	}
	_, _, err := q.SendBatch([]SendBatchEntry{{ID: "a", SendInput: SendInput{Body: "x"}}})
	if code(err) != "RequestThrottled" {
		t.Fatalf("SendBatch near the limit: %v", err)
	}
	// Validation still comes first.
	if _, _, err := q.SendBatch(nil); code(err) != "EmptyBatchRequest" {
		t.Fatalf("empty batch: %v", err)
	}
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if len(got) != 1 || got[0].Body != "before" {
		t.Fatalf("received %+v", got)
	}
	if err := q.Delete(got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}

	live = 700
	recheck()
	send(t, q, "after")
	// Messages kept outside Go's heap count too.
	mapped = 51
	recheck()
	if _, err := q.Send(SendInput{Body: "x"}); code(err) != "RequestThrottled" {
		t.Fatalf("Send with the mapped store past the limit: %v", err)
	}
	mapped = 0
	recheck()
	limit = math.MaxInt64 // no limit: never refused
	live = math.MaxUint64
	recheck()
	send(t, q, "unlimited")
}

// The collector's headroom follows the mapped store: as much as it holds,
// at most 16 MiB, never less than GOGC 100 gives.
func TestGCPercentFollowsTheStore(t *testing.T) {
	for _, c := range []struct {
		live, mapped uint64
		want         int
	}{
		{10 << 20, 0, 100},
		{0, 1 << 30, 100},
		{10 << 20, 5 << 20, 100},     // less than the heap itself
		{4 << 20, 12 << 20, 300},     // 12 MiB of headroom over 4 MiB
		{4 << 20, 4 << 30, 400},      // capped at 16 MiB
		{200 << 20, 4 << 30, 100},    // a large heap has its own headroom
		{1 << 20, 1 << 40, 100 * 16}, // a tiny heap
	} {
		if got := gcPercentFor(c.live, c.mapped); got != c.want {
			t.Errorf("gcPercentFor(%d, %d) = %d, want %d", c.live, c.mapped, got, c.want)
		}
	}
}
