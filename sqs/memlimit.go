package sqs

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Sends are refused near the process's memory limit, so that a backlog
// nobody consumes ends in an AWS error the SDKs know, never in the kernel
// killing fanout. The limit is Go's own (debug.SetMemoryLimit, GOMEMLIMIT):
// fanout's --memory-limit sets it. RequestThrottled is the error: it is what
// SQS answers a sender it will not serve now, and the SDKs retry it with
// backoff, which is right while consumers drain the queues.
//
// The test is the live heap after the latest collection, plus the message
// store's memory outside Go's heap (arena.go), against storeShare of the
// limit: the rest is headroom for the collector, which
// near the limit runs more often to stay under it. Reading the runtime's
// metrics costs a microsecond, so the answer is kept for recheckEvery.

const (
	storeShare   = 0.75
	recheckEvery = 10 * time.Millisecond
)

// memory sources; tests replace them.
var (
	memoryLimit = func() int64 { return debug.SetMemoryLimit(-1) } // -1 reads it
	liveHeap    = func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
	mappedStore = func() uint64 { return uint64(max(offHeap.Load(), 0)) }
)

// memGuard caches whether the store is full; one per process, as memory is.
type memGuard struct {
	next atomic.Int64 // nanoseconds since guardEpoch of the next check
	full atomic.Bool
}

var storeGuard memGuard

// guardEpoch is what the guard's times count from: time.Since of it reads
// only the monotonic clock, half of what time.Now reads, on every send.
var guardEpoch = time.Now()

// check returns the error for a send while the store is full, else nil. It
// reads the real clock, not the engine's: memory fills in real time.
func (g *memGuard) check() error {
	now := int64(time.Since(guardEpoch))
	if next := g.next.Load(); now < next || !g.next.CompareAndSwap(next, now+int64(recheckEvery)) {
		if g.full.Load() {
			return throttled()
		}
		return nil
	}
	limit := memoryLimit()
	live, mapped := liveHeap(), mappedStore()
	paceGC(live, mapped)
	full := limit != math.MaxInt64 && float64(live+mapped) > storeShare*float64(limit)
	g.full.Store(full)
	if full {
		return throttled()
	}
	return nil
}

func throttled() error {
	return ErrRequestThrottled.New("fanout is near its memory limit (--memory-limit): no more messages are stored until consumers delete some or queues are purged.")
}
