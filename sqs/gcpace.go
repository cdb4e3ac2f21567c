package sqs

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// With queued messages outside Go's heap (arena.go), the live heap is a few
// megabytes however large the store, and at GOGC 100 the collector would run
// every few megabytes of request garbage: 20 collections a second under load,
// each with its fixed cost (preempting every goroutine, sweeping), which
// cost a 1 KiB SendMessageBatch a fifth more CPU than when the messages were
// on the heap. So the heap may grow by as much as the mapped store holds,
// at most gcHeadroomMax, before a collection: several times fewer
// collections than at GOGC 100, and the resident memory this costs stays
// small next to a large store. A GOGC the user set (the variable, or debug.SetGCPercent by a
// program embedding the engine) is left alone; the memory limit still
// applies, as it overrides GOGC near it. The cap is 16 MiB, not 64: with
// 64, each cycle's allocations walked through more heap than the caches
// hold, and a 64-byte SendMessageBatch cost fanout 4 to 14 % more CPU
// (load tool, 2 rounds each of 8 and 16 MiB against 64 in one run).

const gcHeadroomMax = 16 << 20

// gcPercentFor is the GOGC that lets a heap of live bytes grow by the
// headroom a mapped store of that size earns, never below Go's default.
func gcPercentFor(live, mapped uint64) int {
	head := min(mapped, gcHeadroomMax)
	if live == 0 || head <= live {
		return 100
	}
	return int(100 * head / live)
}

var gcPace struct {
	sync.Mutex
	set  int  // the percent last set; 0: none yet
	user bool // GOGC is the user's: never touch it
}

// paceGC adjusts GOGC to the store; the memory guard calls it (every
// recheckEvery at most).
func paceGC(live, mapped uint64) {
	gcPace.Lock()
	defer gcPace.Unlock()
	if gcPace.user {
		return
	}
	cur := currentGCPercent()
	if gcPace.set == 0 {
		if _, env := os.LookupEnv("GOGC"); env || cur != 100 {
			gcPace.user = true
			return
		}
		gcPace.set = 100
	}
	if cur != gcPace.set { // someone else changed it since
		gcPace.user = true
		return
	}
	want := gcPercentFor(live, mapped)
	if d := want - gcPace.set; d*10 > gcPace.set || -d*10 > gcPace.set { // ignore changes under 10 %
		debug.SetGCPercent(want)
		gcPace.set = want
	}
}

func currentGCPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int(s[0].Value.Uint64())
}
