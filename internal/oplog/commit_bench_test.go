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
	var wg sync.WaitGroup
	per := b.N/8 + 1
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := l.Commit([]persist.Record{persist.Put([]byte(fmt.Sprintf("k/%d/%d", w, i)), val)}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
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
	var wg sync.WaitGroup
	per := b.N/8 + 1
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := make([]byte, 0, 32)
			for i := range per {
				key = fmt.Appendf(key[:0], "k/%d/%d", w, i)
				l.Enqueue([]persist.Record{persist.Put(key, val)})
			}
		}()
	}
	wg.Wait()
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(8*per), "cpu-ns/op")
	l.Close()
}
