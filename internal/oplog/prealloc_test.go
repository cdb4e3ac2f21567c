package oplog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/internal/persist"
)

// copyFiles copies dir's files into a fresh dir: what a crash at this
// moment would leave (the page cache survives a process's death).
func copyFiles(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == lockName {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func fileLen(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestACrashedSegmentEndsCleanlyAtItsZeros(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{Prealloc: 1 << 20})
	for i := range 100 {
		if err := l.Commit([]persist.Record{kv(fmt.Sprint(i), "v")}); err != nil {
			t.Fatal(err)
		}
	}
	seg := filepath.Join(dir, segName(0))
	if n := fileLen(t, seg); n != 1<<20 {
		t.Fatalf("a durable segment holds %d bytes, want its 1 MiB preallocated", n)
	}
	crashed := copyFiles(t, dir) // as a kill -9 now would leave it
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fileLen(t, seg); n >= 1<<20 {
		t.Fatalf("Close left the segment at %d bytes, its zeros with it", n)
	}
	got, rec := reopen(t, crashed)
	if len(got) != 100 || rec.Dropped != nil {
		t.Fatalf("recovered %d keys (want 100), dropped %v", len(got), rec.Dropped)
	}
	if n := fileLen(t, filepath.Join(crashed, segName(0))); n >= 1<<20 {
		t.Fatalf("recovery left the crashed segment's zeros: %d bytes", n)
	}
}

func TestAnOlderSegmentsZeroTailIsItsEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{SegmentSize: 4 << 10})
	want := model{}
	for i := range 1000 {
		k := fmt.Sprint(i)
		if err := l.Commit([]persist.Record{kv(k, "value")}); err != nil {
			t.Fatal(err)
		}
		want[k] = "value"
	}
	l.Close()
	// A crash after a segment was finished and before its trim reached the
	// disk leaves the zeros in an older segment.
	older := filepath.Join(dir, segName(0))
	f, err := os.OpenFile(older, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 3000))
	f.Close()
	got, rec := reopen(t, dir)
	sameState(t, got, want)
	if rec.Segments < 2 || rec.Dropped != nil {
		t.Fatalf("recovery %+v", rec)
	}
}

func TestZerosFollowedByDataAreATornTail(t *testing.T) {
	t.Parallel()
	dir, data, ends := logOf(t, [][]persist.Record{{kv("a", "1")}, {kv("b", "2")}})
	// The second frame's first bytes never reached the disk, a later part did.
	damaged := append([]byte(nil), data...)
	copy(damaged[ends[0]:], make([]byte, frameHeaderSize+2))
	os.WriteFile(filepath.Join(dir, segName(0)), damaged, 0o644)
	got, rec := reopen(t, dir)
	sameState(t, got, model{"a": "1"})
	if rec.Dropped == nil || rec.Dropped.Offset != ends[0] || rec.Dropped.Reason != "a frame header of zeros followed by data" {
		t.Fatalf("dropped %+v", rec.Dropped)
	}
}

// diskFile keeps what a disk holds: bytes reach it at a Sync, not a write.
type diskFile struct {
	mu      sync.Mutex
	written []byte
	durable []byte
}

func (d *diskFile) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(d.written)) {
		d.written = append(d.written, make([]byte, end-int64(len(d.written)))...)
	}
	copy(d.written[off:], p)
	return len(p), nil
}

func (d *diskFile) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.durable = append(d.durable[:0], d.written...)
	return nil
}

func (d *diskFile) Truncate(n int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n < int64(len(d.written)) {
		d.written = d.written[:n]
	}
	return nil
}

func (d *diskFile) Close() error { return nil }

func (d *diskFile) holds(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bytes.Contains(d.durable, []byte(key))
}

// With writes and syncs overlapping, a commit still answers only once a
// sync that began after its write has ended.
func TestACommitAnswersOnlyAfterItsBytesAreSynced(t *testing.T) {
	t.Parallel()
	disk := &diskFile{}
	l, _, err := Open(t.TempDir(), Options{OpenSegment: func(string) (SegmentFile, error) { return disk, nil }},
		func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				k := fmt.Sprintf("<w%d-%d>", w, i)
				if err := l.Commit([]persist.Record{kv(k, "v")}); err != nil {
					t.Error(err)
					return
				}
				if !disk.holds(k) {
					t.Errorf("%s was acknowledged before a sync covered it", k)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Syncs >= s.Batches {
		t.Errorf("%d batches took %d syncs: no group commit", s.Batches, s.Syncs)
	}
}

// noSyncFile is a segment whose syncs cost nothing: for tests of what
// is written, not of when it is durable.
type noSyncFile struct{ *os.File }

func (noSyncFile) Sync() error { return nil }

func openNoSync(path string) (SegmentFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	return noSyncFile{f}, err
}

// snapshotModel is a Snapshotter over a model, counting its snapshots.
type snapshotModel struct {
	mu    sync.Mutex
	live  model
	snaps int
}

func (s *snapshotModel) snapshot(emit func(k, v []byte) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps++
	for k, v := range s.live {
		if err := emit([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	return nil
}

// del deletes k as put puts.
func (s *snapshotModel) del(t *testing.T, l *Log, k string) {
	s.mu.Lock()
	delete(s.live, k)
	p := l.Enqueue([]persist.Record{persist.Delete([]byte(k))})
	s.mu.Unlock()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

// put enqueues under the model's lock, as the persist contract asks, and
// waits outside it.
func (s *snapshotModel) put(t *testing.T, l *Log, k, v string) {
	s.mu.Lock()
	s.live[k] = v
	p := l.Enqueue([]persist.Record{kv(k, v)})
	s.mu.Unlock()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

// A log that only grows (a backlog filling up) is not rewritten every time
// it doubles: a snapshot would reclaim nothing.
func TestAGrowingLogIsRarelyCompacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &snapshotModel{live: model{}}
	l, _, _ := openT(t, dir, Options{OpenSegment: openNoSync, Snapshot: s.snapshot, CompactMin: 64 << 10, SegmentSize: 64 << 10})
	body := strings.Repeat("b", 200)
	for i := range 20000 { // about 4.6 MB of new keys
		s.put(t, l, fmt.Sprintf("k/%d", i), body)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	snaps := s.snaps
	s.mu.Unlock()
	// Compacting at twice the snapshot, as before, took 4 here.
	if snaps > 3 {
		t.Errorf("%d snapshots of a log that only grew to 4.6 MB from 64 KiB", snaps)
	}
	got, _ := reopen(t, dir)
	sameState(t, got, s.live)
}

// Deleted records are weighed by their bytes: big records that stay next
// to small ones that die (a Publish to three queues, one of them drained)
// make a log that mostly grows, though most of its records are garbage.
// When big records start dying, one compaction measures it and the next
// ones follow the deletes again.
func TestSmallDeletesAmongBigRecordsAreNotCompactedFor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &snapshotModel{live: model{}}
	l, _, _ := openT(t, dir, Options{OpenSegment: openNoSync, Snapshot: s.snapshot, CompactMin: 64 << 10, SegmentSize: 64 << 10})
	big := strings.Repeat("b", 1000)
	snaps := func() int {
		l.compacting.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.snaps
	}
	const keys = 1000
	// Each step waits for a compaction it started, so that the count does
	// not depend on how fast the writes outrun it.
	for i := range keys { // about 1.1 MB that stays, 1,000 small records that die
		k := fmt.Sprintf("k/%d", i)
		s.put(t, l, k, big)
		s.put(t, l, k+"/status", "s")
		s.del(t, l, k+"/status")
		l.compacting.Wait()
	}
	// Weighed by records (two of every three dead) it took 3 here.
	grown := snaps()
	if grown > 2 {
		t.Errorf("%d snapshots of a log whose bytes only grew to 1.1 MB from 64 KiB", grown)
	}
	for i := keys; i < 17*keys; i++ { // 17.6 MB more, each new record replacing an old one
		s.put(t, l, fmt.Sprintf("k/%d", i), big)
		s.del(t, l, fmt.Sprintf("k/%d", i-keys))
		l.compacting.Wait()
	}
	churned := snaps() - grown
	t.Logf("%d snapshots while growing, %d while churning", grown, churned)
	if churned < 3 {
		t.Errorf("%d snapshots while 17.6 MB were written over 1.1 MB of live records", churned)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := reopen(t, dir)
	sameState(t, got, s.live)
}

// Overwrites leave garbage the log cannot count; the growth limit still
// bounds the disk.
func TestOverwritesAreStillCompacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &snapshotModel{live: model{}}
	l, _, _ := openT(t, dir, Options{OpenSegment: openNoSync, Snapshot: s.snapshot, CompactMin: 64 << 10, SegmentSize: 16 << 10})
	body := strings.Repeat("b", 200)
	for i := range 10000 { // 2.3 MB written over 40 keys
		s.put(t, l, fmt.Sprintf("k/%d", i%40), fmt.Sprint(body, i))
	}
	// Compaction runs beside the writes, one at a time, and under load the
	// writes outpace it; what is checked is that it catches up. Once the
	// running one ended, one more put starts the next if one is due.
	l.compacting.Wait()
	s.put(t, l, "k/0", body)
	l.compacting.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if disk := dirBytes(t, dir); disk > 4*64<<10 {
		t.Fatalf("%d bytes on disk for 40 live keys overwritten 250 times each", disk)
	}
	got, _ := reopen(t, dir)
	sameState(t, got, s.live)
}

// heldFile is a segment whose next Sync, once hold is armed, waits for
// release: a slow sync that began before a faster one.
type heldFile struct {
	*os.File
	h *holdHooks
}

type holdHooks struct {
	mu      sync.Mutex
	armed   bool
	held    chan struct{} // closed when the held sync starts waiting
	release chan struct{}
	events  []string
}

func (h *holdHooks) event(e string) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (f heldFile) Sync() error {
	f.h.mu.Lock()
	hold := f.h.armed
	f.h.armed = false
	f.h.mu.Unlock()
	if hold {
		close(f.h.held)
		<-f.h.release
		f.h.event("held sync ended")
	}
	return f.File.Sync()
}

// A rotation (here a compaction's) waits for every sync to end, not only
// for one that covered every group: a slower sync that began earlier could
// otherwise open or sync a segment the compaction then deletes.
func TestRotationWaitsForEverySync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := &holdHooks{held: make(chan struct{}), release: make(chan struct{})}
	open := func(path string) (SegmentFile, error) {
		h.event("open " + filepath.Base(path))
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		return heldFile{f, h}, err
	}
	s := &snapshotModel{live: model{}}
	l, _, _ := openT(t, dir, Options{OpenSegment: open, Snapshot: s.snapshot})
	s.put(t, l, "a", "1") // both flushers' descriptors may now be open
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
	first := make(chan error, 1)
	s.mu.Lock()
	s.live["b"] = "2"
	pb := l.Enqueue([]persist.Record{kv("b", "2")})
	s.mu.Unlock()
	go func() { first <- pb.Wait() }()
	<-h.held
	// The other flusher syncs this one, and that sync covers "b" too.
	s.put(t, l, "c", "3")
	compacted := make(chan error, 1)
	go func() { compacted <- l.Compact() }()
	time.Sleep(50 * time.Millisecond) // room for a rotation that does not wait
	h.event("release")
	close(h.release)
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	l.Close()
	h.mu.Lock()
	events := append([]string(nil), h.events...)
	h.mu.Unlock()
	next := "open " + segName(1)
	for _, e := range events {
		if e == next {
			t.Fatalf("segment 1 was started while a sync of segment 0 still ran: %q", events)
		}
		if e == "held sync ended" {
			break
		}
	}
	got, _ := reopen(t, dir)
	sameState(t, got, model{"a": "1", "b": "2", "c": "3"})
}
