package oplog

import (
	"fmt"
	"sync"
	"testing"

	"github.com/fanout/fanout/internal/persist"
)

// BenchmarkCommit8 commits from 8 goroutines at once, as 8 clients do: the
// rate, and the group size (batches per sync).
func BenchmarkCommit8(b *testing.B) {
	l, _, err := Open(b.TempDir(), Options{}, func(k, v []byte) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 200)
	b.ResetTimer()
	from8(b, func(w, i int) error {
		return l.Commit([]persist.Record{persist.Put([]byte(fmt.Sprintf("k/%d/%d", w, i)), val)})
	})
	b.StopTimer()
	s := l.Stats()
	b.ReportMetric(float64(s.Batches)/float64(s.Syncs), "batches/sync")
	l.Close()
}

// BenchmarkRelaxed1KiB enqueues 1 KiB records in relaxed mode from 8
// goroutines: the process's CPU (user and system) per record, which is
// what relaxed mode costs next to keeping nothing.
func BenchmarkRelaxed1KiB(b *testing.B) {
	l, _, err := Open(b.TempDir(), Options{Mode: Relaxed}, func(k, v []byte) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 1024)
	for i := range val {
		val[i] = byte(i * 7)
	}
	c0 := cpuTime()
	b.ResetTimer()
	n := from8(b, func(w, i int) error {
		l.Enqueue([]persist.Record{persist.Put(fmt.Appendf(nil, "k/%d/%d", w, i), val)})
		return nil
	})
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(n), "cpu-ns/op")
	l.Close()
}

// from8 runs op b.N times in all from 8 goroutines, as 8 clients do (w is
// the goroutine, i the call), stopping a goroutine at its first error; it
// returns how many calls it made.
func from8(b *testing.B, op func(w, i int) error) int {
	var wg sync.WaitGroup
	per := b.N/8 + 1
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := op(w, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return 8 * per
}
