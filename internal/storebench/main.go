// Command storebench measures the candidate stores for fanout's durability
// (issue 14) on a workload shaped like fanout's: concurrent writers, each
// call waiting for durability, "message sent" records of ~120 bytes of
// metadata plus a body, and "message deleted" records. It is a separate
// module so the main go.mod never carries the candidates it rejects;
// docs/durability-store.md has the figures and the choice.
//
//	go run . -store oplog -test throughput -writers 64 -body 1024
//	go run . -store bbolt -test fill -n 1000000 -dir DIR && go run . -store bbolt -test recover -dir DIR
//	go run . -store sqlite -test churn -n 10000000
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fanout/fanout/internal/persist"
)

// store is what each candidate offers the harness: a durable, atomic batch
// commit safe for concurrent callers, and recovery of every live key.
type store interface {
	commit(batch []persist.Record) error
	// syncs counts fsyncs (or, where the store's own count is not
	// reachable, its commits; the doc says which).
	syncs() int64
	close() error
}

type opener func(dir string, snap persist.Snapshotter, load persist.Loader) (store, error)

var stores = map[string]opener{
	"oplog":  openOplog,
	"pebble": openPebble,
	"bbolt":  openBbolt,
	"sqlite": openSQLite,
}

func main() {
	name := flag.String("store", "oplog", "oplog, pebble, bbolt or sqlite")
	test := flag.String("test", "throughput", "throughput, fill, recover or churn")
	writers := flag.Int("writers", 8, "concurrent writers (throughput)")
	body := flag.Int("body", 64, "message body bytes")
	dur := flag.Duration("dur", 8*time.Second, "how long to write (throughput)")
	n := flag.Int("n", 1000000, "messages (fill) or sends (churn)")
	dir := flag.String("dir", "", "data dir (default: a fresh temporary one)")
	compact := flag.Bool("compact", false, "fill: compact (snapshot) before closing, where the store has it")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here")
	label := flag.String("label", "", "a word printed before the results line")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	open, ok := stores[*name]
	if !ok {
		log.Fatalf("unknown store %q", *name)
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "storebench-"+*name+"-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	if *label != "" {
		fmt.Print(*label, " ")
	}
	switch *test {
	case "throughput":
		throughput(open, *name, *dir, *writers, *body, *dur)
	case "fill":
		fill(open, *name, *dir, *n, *body, *compact)
	case "recover":
		recoverAll(open, *name, *dir)
	case "churn":
		churn(open, *name, *dir, *n, *body)
	default:
		log.Fatalf("unknown test %q", *test)
	}
}

// value is a message as fanout would store it: ~120 bytes of metadata
// (ids, timestamps, receive count, attributes digest) and the body. The
// bytes are random: a store that compresses (pebble) would otherwise look
// smaller on disk than it is for bodies that do not compress.
func value(body, seq int) []byte {
	v := make([]byte, 120+body)
	r := rand.New(rand.NewPCG(uint64(seq), 7))
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

func key(writer, i int) []byte {
	return fmt.Appendf(nil, "q/queue-%03d/%08x-0000-4000-8000-%012x", writer%50, writer, i)
}

// throughput: each writer sends a message and deletes the one it sent
// `keep` sends earlier, every call waiting for durability.
func throughput(open opener, name, dir string, writers, body int, dur time.Duration) {
	s, err := open(dir, nil, func(k, v []byte) error { return nil })
	if err != nil {
		log.Fatal(err)
	}
	const keep = 100
	var records atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := value(body, w)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := s.commit([]persist.Record{persist.Put(key(w, i), v)}); err != nil {
					log.Fatal(err)
				}
				records.Add(1)
				if i >= keep {
					if err := s.commit([]persist.Record{persist.Delete(key(w, i-keep))}); err != nil {
						log.Fatal(err)
					}
					records.Add(1)
				}
			}
		}()
	}
	time.Sleep(dur)
	close(stop)
	wg.Wait()
	el := time.Since(start).Seconds()
	syncs := s.syncs()
	if err := s.close(); err != nil {
		log.Fatal(err)
	}
	r := records.Load()
	fmt.Printf("throughput store=%s writers=%d body=%d records=%d secs=%.1f records/s=%.0f syncs/s=%.0f records/sync=%.1f\n",
		name, writers, body, r, el, float64(r)/el, float64(syncs)/el, float64(r)/float64(max(syncs, 1)))
}

// fill stores n messages (1000 per durable commit) for recover to load.
func fill(open opener, name, dir string, n, body int, compact bool) {
	live := newLiveMap()
	var snap persist.Snapshotter
	if compact {
		snap = live.snapshot
	}
	s, err := open(dir, snap, func(k, v []byte) error { return nil })
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	batch := make([]persist.Record, 0, 1000)
	for i := range n {
		k, v := key(i%64, i), value(body, i)
		batch = append(batch, persist.Put(k, v))
		if len(batch) == cap(batch) || i == n-1 {
			if compact {
				live.apply(batch)
			}
			if err := s.commit(batch); err != nil {
				log.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	var compactSecs float64
	if c, ok := s.(interface{ compact() error }); ok && compact {
		t := time.Now()
		if err := c.compact(); err != nil {
			log.Fatal(err)
		}
		compactSecs = time.Since(t).Seconds()
	}
	if err := s.close(); err != nil {
		log.Fatal(err)
	}
	d := du(dir)
	fmt.Printf("fill store=%s n=%d body=%d secs=%.1f compact=%v compact-secs=%.1f disk=%d bytes/msg=%.0f\n",
		name, n, body, time.Since(start).Seconds(), compact, compactSecs, d, float64(d)/float64(n))
}

// recoverAll opens dir and loads every live message into a map, as the
// engines would at start-up.
func recoverAll(open opener, name, dir string) {
	cpu0 := cpuTime()
	start := time.Now()
	mem := map[string][]byte{}
	var bytes int64
	s, err := open(dir, nil, func(k, v []byte) error {
		mem[string(k)] = v
		bytes += int64(len(v))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	s.close()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("recover store=%s messages=%d value-bytes=%d ms=%d cpu-ms=%d maxrss-mb=%d\n",
		name, len(mem), bytes, el.Milliseconds(), cpu.Milliseconds(), ru.Maxrss>>10)
}

// churn sends n messages and deletes each once `live` newer ones exist,
// 1000 records per durable commit, and reports the disk it ends with.
func churn(open opener, name, dir string, n, body int) {
	const live = 1000
	state := newLiveMap()
	s, err := open(dir, state.snapshot, func(k, v []byte) error { return nil })
	if err != nil {
		log.Fatal(err)
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if d := du(dir); d > peak.Load() {
					peak.Store(d)
				}
			}
		}
	}()
	start := time.Now()
	v := value(body, 0)
	batch := make([]persist.Record, 0, 1000)
	flush := func() {
		state.apply(batch)
		if err := s.commit(batch); err != nil {
			log.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range n {
		batch = append(batch, persist.Put(key(i%64, i), v))
		if i >= live {
			batch = append(batch, persist.Delete(key((i-live)%64, i-live)))
		}
		if len(batch) >= 1000 {
			flush()
		}
	}
	flush()
	el := time.Since(start).Seconds()
	open1 := du(dir)
	if err := s.close(); err != nil {
		log.Fatal(err)
	}
	close(stop)
	<-sampled
	fmt.Printf("churn store=%s sends=%d deletes=%d body=%d secs=%.0f disk-open=%d disk-closed=%d peak=%d\n",
		name, n, n-live, body, el, open1, du(dir), max(peak.Load(), open1))
}

// liveMap is the state the engines would hold in memory, which is what a
// log-based store snapshots from.
type liveMap struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newLiveMap() *liveMap { return &liveMap{m: map[string][]byte{}} }

func (l *liveMap) apply(batch []persist.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range batch {
		if r.Op == persist.OpPut {
			l.m[string(r.Key)] = r.Value
		} else {
			delete(l.m, string(r.Key))
		}
	}
}

func (l *liveMap) snapshot(emit func(k, v []byte) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range l.m {
		if err := emit([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// cpuTime is the process's user+system time: on a machine shared with
// other jobs it says what recovery costs better than the wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func du(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}
