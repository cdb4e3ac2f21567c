package oplog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fanout/fanout/internal/persist"
)

// model is the state a test expects: the same rules as the store's, kept
// independently of it.
type model map[string]string

func (m model) apply(batch []persist.Record) {
	for _, r := range batch {
		switch r.Op {
		case persist.OpPut:
			m[string(r.Key)] = string(r.Value)
		case persist.OpDelete:
			delete(m, string(r.Key))
		case persist.OpDeletePrefix:
			for k := range m {
				if strings.HasPrefix(k, string(r.Key)) {
					delete(m, k)
				}
			}
		}
	}
}

func openT(t *testing.T, dir string, opts Options) (*Log, model, Recovery) {
	t.Helper()
	got := model{}
	l, rec, err := Open(dir, opts, func(k, v []byte) error {
		if _, dup := got[string(k)]; dup {
			return fmt.Errorf("key %q loaded twice", k)
		}
		got[string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, got, rec
}

func reopen(t *testing.T, dir string) (model, Recovery) {
	t.Helper()
	l, got, rec := openT(t, dir, Options{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return got, rec
}

func sameState(t *testing.T, got, want model) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("recovered %d keys, want %d\n got %v\nwant %v", len(got), len(want), trim(got), trim(want))
	}
}

func trim(m model) string {
	s := fmt.Sprint(map[string]string(m))
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

func kv(k, v string) persist.Record { return persist.Put([]byte(k), []byte(v)) }
func del(k string) persist.Record   { return persist.Delete([]byte(k)) }

func TestRoundTripKeepsLastWriteOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, got, rec := openT(t, dir, Options{})
	if len(got) != 0 || rec.Dropped != nil {
		t.Fatalf("fresh dir: %v %v", got, rec)
	}
	batches := [][]persist.Record{
		{kv("q/a/1", "one"), kv("q/a/2", "two"), kv("q/b/1", "b-one")},
		{kv("q/a/1", "one, received")}, // rewritten: now last in order
		{del("q/a/2")},
		{kv("q/c/1", "c")},
		{persist.DeletePrefix([]byte("q/b/"))},
		{kv("empty", "")},
	}
	for _, b := range batches {
		if err := l.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var order []string
	l2, rec, err := Open(dir, Options{}, func(k, v []byte) error {
		order = append(order, string(k)+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	want := []string{"q/a/1=one, received", "q/c/1=c", "empty="}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("loaded %v, want %v", order, want)
	}
	if rec.Keys != 3 || rec.Batches != len(batches) || rec.Dropped != nil {
		t.Fatalf("recovery %+v", rec)
	}
}

func TestUnknownOpIsRefusedAtEnqueue(t *testing.T) {
	t.Parallel()
	l, _, _ := openT(t, t.TempDir(), Options{})
	defer l.Close()
	if err := l.Commit([]persist.Record{kv("a", "1"), {Op: 9, Key: []byte("x")}}); err == nil {
		t.Fatal("a record with op 9 was accepted")
	}
	// Nothing of the refused batch is half-buffered.
	if err := l.Commit([]persist.Record{kv("b", "2")}); err != nil {
		t.Fatal(err)
	}
}

// countingFile counts fsyncs and can fail like a full disk.
type countingFile struct {
	*os.File
	syncs     *atomic.Int64
	failWrite *atomic.Bool
	failSync  *atomic.Bool
}

func (f countingFile) WriteAt(p []byte, off int64) (int, error) {
	if f.failWrite.Load() {
		// Half of it lands, as a real short write would leave it.
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(p, off)
}

func (f countingFile) Sync() error {
	f.syncs.Add(1)
	if f.failSync.Load() {
		return syscall.EIO
	}
	return f.File.Sync()
}

// logLines collects a Log's Logf lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

type hooks struct {
	syncs               atomic.Int64
	failWrite, failSync atomic.Bool
}

func (h *hooks) open(path string) (SegmentFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return countingFile{f, &h.syncs, &h.failWrite, &h.failSync}, nil
}

func TestConcurrentAppendsShareFsyncs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := &hooks{}
	l, _, err := Open(dir, Options{OpenSegment: h.open}, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 64, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := fmt.Sprintf("m/%d/%d", w, i)
				if err := l.Commit([]persist.Record{kv(k, "body")}); err != nil {
					t.Error(err)
					return
				}
				if i%2 == 1 {
					if err := l.Commit([]persist.Record{del(k)}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	commits := int64(writers * each * 3 / 2)
	if s := h.syncs.Load(); s >= commits {
		t.Errorf("%d commits took %d fsyncs: no group commit", commits, s)
	}
	got, _ := reopen(t, dir)
	if len(got) != writers*each/2 {
		t.Fatalf("recovered %d keys, want %d", len(got), writers*each/2)
	}
}

func TestRelaxedAcknowledgesBeforeSync(t *testing.T) {
	t.Parallel()
	dir, h := t.TempDir(), &hooks{}
	l := openUntickedRelaxed(t, dir, h)
	for i := range 100 {
		if err := l.Commit([]persist.Record{kv(fmt.Sprint(i), "v")}); err != nil {
			t.Fatal(err)
		}
	}
	if s := h.syncs.Load(); s != 0 {
		t.Fatalf("relaxed mode synced %d times before its interval", s)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if s := h.syncs.Load(); s != 1 {
		t.Fatalf("Sync took %d fsyncs, want 1 for everything pending", s)
	}
	l.Commit([]persist.Record{kv("last", "v")})
	if err := l.Close(); err != nil { // Close syncs what is pending
		t.Fatal(err)
	}
	if got, _ := reopen(t, dir); len(got) != 101 {
		t.Fatalf("recovered %d keys, want 101", len(got))
	}
}

func TestFullDiskFailsTheBatchAndLaterOnesMaySucceed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := &hooks{}
	var logged logLines
	l, _, err := Open(dir, Options{OpenSegment: h.open, Logf: logged.logf}, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Commit([]persist.Record{kv("before", "1")}); err != nil {
		t.Fatal(err)
	}
	h.failWrite.Store(true)
	err = l.Commit([]persist.Record{kv("lost-a", "1"), kv("lost-b", "2")})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("commit on a full disk: %v, want ENOSPC", err)
	}
	if err := l.Commit([]persist.Record{kv("lost-c", "1")}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("second commit on a full disk: %v, want ENOSPC", err)
	}
	h.failWrite.Store(false) // space freed
	if err := l.Commit([]persist.Record{kv("after", "1")}); err != nil {
		t.Fatalf("commit after space was freed: %v", err)
	}
	// One line when the disk refuses (not one per batch), one when it takes writes again.
	if lines := logged.all(); len(lines) != 2 || !strings.Contains(lines[0], "no space left on device") ||
		!strings.Contains(lines[0], "answer 500") || !strings.Contains(lines[1], "writes succeed again; the calls of 2 batches were refused") {
		t.Errorf("log lines %q", lines)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, rec := reopen(t, dir)
	sameState(t, got, model{"before": "1", "after": "1"})
	if rec.Dropped != nil {
		t.Fatalf("the half-written batch was left in the file: %v", rec.Dropped)
	}
}

func TestFailedFsyncRefusesEveryLaterBatch(t *testing.T) {
	t.Parallel()
	h := &hooks{}
	l, _, err := Open(t.TempDir(), Options{OpenSegment: h.open}, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	h.failSync.Store(true)
	if err := l.Commit([]persist.Record{kv("a", "1")}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("commit with a failing fsync: %v", err)
	}
	h.failSync.Store(false)
	if err := l.Commit([]persist.Record{kv("b", "1")}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("commit after a failed fsync: %v, want the sticky EIO", err)
	}
	if err := l.Close(); err == nil {
		t.Fatal("Close after a failed fsync reported success")
	}
}

func TestSecondOpenOfADirIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{})
	_, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil })
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second open: %v, want ErrLocked naming our pid", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, _, _ = openT(t, dir, Options{}) // released on Close
	l.Close()
}

func TestUnwritableDirIsAnError(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(filepath.Join(file, "data"), Options{}, nil); err == nil {
		t.Fatal("a data dir under a regular file opened")
	}
	if os.Geteuid() != 0 { // root writes through permission bits
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		if _, _, err := Open(ro, Options{}, nil); err == nil {
			t.Fatal("a read-only data dir opened")
		}
	}
}

func TestOtherFormatVersionIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{})
	l.Commit([]persist.Record{kv("a", "1")})
	l.Close()
	seg := filepath.Join(dir, segName(0))
	data, _ := os.ReadFile(seg)
	h := header(logMagic)
	h[8] = 7 // as a future fanout would write it, checksum and all
	binaryPutCRC(h)
	copy(data, h)
	os.WriteFile(seg, data, 0o644)
	_, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil })
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Version != 7 || !strings.Contains(err.Error(), "format 7") {
		t.Fatalf("open of a format-7 dir: %v", err)
	}
	os.WriteFile(seg, []byte("this is not a fanout file at all"), 0o644)
	if _, _, err := Open(dir, Options{}, nil); err == nil || !strings.Contains(err.Error(), "not a fanout data file") {
		t.Fatalf("open of a foreign file: %v", err)
	}
}

// logOf writes batches into a fresh dir and returns the segment's bytes and
// the offset where each frame ends.
func logOf(t *testing.T, batches [][]persist.Record) (dir string, data []byte, ends []int64) {
	t.Helper()
	dir = t.TempDir()
	l, _, _ := openT(t, dir, Options{})
	for _, b := range batches {
		if err := l.Commit(b); err != nil {
			t.Fatal(err)
		}
		l.smu.Lock()
		ends = append(ends, l.sizes[0])
		l.smu.Unlock()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, segName(0)))
	if err != nil {
		t.Fatal(err)
	}
	return dir, data, ends
}

func TestTruncationAtEveryByteKeepsTheCompleteBatches(t *testing.T) {
	t.Parallel()
	batches := [][]persist.Record{
		{kv("a", "1")},
		{kv("b", "2"), kv("c", "3"), del("a")}, // all or nothing
		{kv("b", "22")},
		{persist.DeletePrefix([]byte("c"))},
	}
	_, data, ends := logOf(t, batches)
	for cut := 0; cut <= len(data); cut++ {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segName(0)), data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		want := model{}
		complete := 0
		for i, end := range ends {
			if int64(cut) >= end {
				want.apply(batches[i])
				complete++
			}
		}
		got, rec := reopen(t, dir)
		sameState(t, got, want)
		atBoundary := cut == headerSize || cut == len(data)
		for _, end := range ends {
			atBoundary = atBoundary || int64(cut) == end
		}
		if atBoundary != (rec.Dropped == nil) {
			t.Fatalf("cut at %d: dropped %+v, at a frame boundary %v", cut, rec.Dropped, atBoundary)
		}
		if rec.Dropped != nil && rec.Dropped.Bytes+rec.Dropped.Offset != int64(cut) && cut >= headerSize {
			t.Fatalf("cut at %d: report %+v does not add up", cut, rec.Dropped)
		}
		// The repaired log takes new batches and keeps them.
		l, _, _ := openT(t, dir, Options{})
		l.Commit([]persist.Record{kv("z", "after")})
		l.Close()
		want["z"] = "after"
		got, rec = reopen(t, dir)
		sameState(t, got, want)
		if rec.Dropped != nil {
			t.Fatalf("cut at %d: second recovery dropped %+v", cut, rec.Dropped)
		}
	}
}

func TestCorruptionOutsideTheTailIsRefused(t *testing.T) {
	t.Parallel()
	dir, _, ends := logOf(t, [][]persist.Record{{kv("a", "1")}, {kv("b", "2")}})
	seg := filepath.Join(dir, segName(0))
	data, _ := os.ReadFile(seg)
	data[ends[0]-1] ^= 0x40 // inside the first batch
	os.WriteFile(seg, data, 0o644)
	// As the newest segment, a bad frame is a torn tail: both batches go.
	got, rec := reopen(t, dir)
	if rec.Dropped == nil || rec.Dropped.Offset != headerSize || len(got) != 0 {
		t.Fatalf("corrupt newest segment: %v %+v", got, rec.Dropped)
	}
	// In an older segment it is damage: refused, never skipped.
	dir, _, ends = logOf(t, [][]persist.Record{{kv("a", "1")}, {kv("b", "2")}})
	l, _, _ := openT(t, dir, Options{}) // starts segment 1
	l.Commit([]persist.Record{kv("c", "3")})
	l.Close()
	seg = filepath.Join(dir, segName(0))
	data, _ = os.ReadFile(seg)
	data[ends[1]-1] ^= 0x40
	os.WriteFile(seg, data, 0o644)
	if _, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "not the newest") {
		t.Fatalf("corrupt older segment: %v", err)
	}
}

func TestMissingSegmentIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 3 {
		l, _, _ := openT(t, dir, Options{})
		l.Commit([]persist.Record{kv(fmt.Sprint(i), "v")})
		l.Close()
	}
	os.Remove(filepath.Join(dir, segName(1)))
	if _, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("open with a segment gone: %v", err)
	}
}

// randomBatch makes a batch of sends and deletes over a small key space.
func randomBatch(r *rand.Rand, n int) []persist.Record {
	var b []persist.Record
	for range 1 + r.IntN(4) {
		k := fmt.Sprintf("q%d/m%d", r.IntN(3), r.IntN(40))
		switch x := r.IntN(10); {
		case x < 6:
			b = append(b, kv(k, strings.Repeat("x", r.IntN(300))+fmt.Sprint(n)))
		case x < 9:
			b = append(b, del(k))
		default:
			b = append(b, persist.DeletePrefix([]byte(k[:2])))
		}
	}
	return b
}

// TestCrashAtRandomOffsets writes, cuts the newest segment anywhere (as a
// crash mid-write would), reopens, checks the state is exactly the batches
// that fit, and carries on from there, many times over one data dir.
func TestCrashAtRandomOffsets(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	want := model{}
	for cycle := range 60 {
		var opts Options
		if cycle%3 == 0 { // some cycles also compact
			snapshotOf := func(m model) persist.Snapshotter {
				return func(emit func(k, v []byte) error) error {
					for k, v := range m {
						if err := emit([]byte(k), []byte(v)); err != nil {
							return err
						}
					}
					return nil
				}
			}
			opts.Snapshot = snapshotOf(want)
		}
		l, got, _ := openT(t, dir, opts)
		sameState(t, got, want)
		var batches [][]persist.Record
		var ends []int64
		for i := range 1 + r.IntN(20) {
			b := randomBatch(r, i)
			if err := l.Commit(b); err != nil {
				t.Fatal(err)
			}
			if opts.Snapshot != nil && i == 0 {
				want.apply(b)
				if err := l.Compact(); err != nil {
					t.Fatal(err)
				}
				continue
			}
			batches = append(batches, b)
			l.smu.Lock()
			ends = append(ends, l.sizes[l.segNum])
			l.smu.Unlock()
		}
		seg := filepath.Join(dir, segName(l.segNum))
		l.Close()
		data, _ := os.ReadFile(seg)
		cut := r.IntN(len(data) + 1)
		os.Truncate(seg, int64(cut))
		for i, end := range ends {
			if int64(cut) >= end {
				want.apply(batches[i])
			}
		}
	}
	got, _ := reopen(t, dir)
	sameState(t, got, want)
}

func TestCompactionKeepsDiskProportionalToLiveState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	live := model{}
	snap := func(emit func(k, v []byte) error) error {
		mu.Lock()
		defer mu.Unlock()
		for k, v := range live {
			if err := emit([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}
	l, _, _ := openT(t, dir, Options{Snapshot: snap, CompactMin: 64 << 10, SegmentSize: 16 << 10})
	body := strings.Repeat("b", 200)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				k := fmt.Sprintf("w%d/%d", w, i)
				// Enqueue under the lock that the snapshot reads under, as
				// the contract asks; wait outside it.
				mu.Lock()
				live[k] = body
				p := l.Enqueue([]persist.Record{kv(k, body)})
				mu.Unlock()
				if err := p.Wait(); err != nil {
					t.Error(err)
					return
				}
				if i >= 10 { // a small live set: 10 per writer
					old := fmt.Sprintf("w%d/%d", w, i-10)
					mu.Lock()
					delete(live, old)
					p := l.Enqueue([]persist.Record{del(old)})
					mu.Unlock()
					if err := p.Wait(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var disk int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			disk += info.Size()
		}
	}
	written := int64(4 * 3000 * 230)
	if disk > 4*64<<10 {
		t.Fatalf("%d bytes on disk after writing %d with 40 keys live: compaction did not keep up", disk, written)
	}
	got, rec := reopen(t, dir)
	sameState(t, got, live)
	if rec.Snapshot == "" {
		t.Fatal("no snapshot was written")
	}
}

func TestCrashDuringSnapshotLeavesTheOldState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fail := errors.New("snapshot interrupted")
	calls := 0
	l, _, _ := openT(t, dir, Options{Snapshot: func(emit func(k, v []byte) error) error {
		calls++
		emit([]byte("half"), []byte("written"))
		return fail
	}})
	l.Commit([]persist.Record{kv("a", "1")})
	if err := l.Compact(); !errors.Is(err, fail) {
		t.Fatalf("compact: %v", err)
	}
	l.Commit([]persist.Record{kv("b", "2")})
	l.Close()
	got, rec := reopen(t, dir)
	sameState(t, got, model{"a": "1", "b": "2"})
	if rec.Snapshot != "" || calls != 1 {
		t.Fatalf("a failed snapshot was used: %+v", rec)
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix)); len(ents) != 0 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

func TestDamagedSnapshotIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{Snapshot: func(emit func(k, v []byte) error) error {
		return emit([]byte("k"), []byte("v"))
	}})
	l.Commit([]persist.Record{kv("k", "v")})
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	snap := filepath.Join(dir, snapName(1))
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(snap, data[:len(data)-3], 0o644)
	if _, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "snapshot") {
		t.Fatalf("open with a cut snapshot: %v", err)
	}
}

func TestLoaderErrorFailsOpenAndReleasesTheLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{})
	l.Commit([]persist.Record{kv("a", "1")})
	l.Close()
	bad := errors.New("engine refused the record")
	if _, _, err := Open(dir, Options{}, func(k, v []byte) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("open: %v", err)
	}
	l, _, _ = openT(t, dir, Options{})
	l.Close()
}

func TestEnqueueAfterCloseIsErrClosed(t *testing.T) {
	t.Parallel()
	l, _, _ := openT(t, t.TempDir(), Options{})
	l.Close()
	if err := l.Commit([]persist.Record{kv("a", "1")}); !errors.Is(err, persist.ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}
}

func binaryPutCRC(h []byte) {
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(h[:12], castagnoli))
}

func TestFilesACompactionLeftBehindAreRemovedAtOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{Snapshot: func(emit func(k, v []byte) error) error {
		return emit([]byte("a"), []byte("1"))
	}})
	l.Commit([]persist.Record{kv("a", "1")})
	l.Close()
	old, _ := os.ReadFile(filepath.Join(dir, segName(0)))
	l, _, _ = openT(t, dir, Options{Snapshot: func(emit func(k, v []byte) error) error {
		return emit([]byte("a"), []byte("1"))
	}})
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// As if a crash had come between the snapshot's rename and the
	// deletion of what it replaced.
	os.WriteFile(filepath.Join(dir, segName(0)), old, 0o644)
	got, rec := reopen(t, dir)
	sameState(t, got, model{"a": "1"})
	if _, err := os.Stat(filepath.Join(dir, segName(0))); !os.IsNotExist(err) || rec.Snapshot != snapName(2) {
		t.Fatalf("replaced segment still there (%v) or wrong snapshot used (%+v)", err, rec)
	}
}

func TestSegmentsOverrideTheSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := model{"a": "1", "b": "2", "p/1": "x", "p/2": "y", "keep": "k"}
	l, _, _ := openT(t, dir, Options{Snapshot: func(emit func(k, v []byte) error) error {
		for k, v := range state {
			if err := emit([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}})
	var all []persist.Record
	for k, v := range state {
		all = append(all, kv(k, v))
	}
	l.Commit(all)
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	after := [][]persist.Record{
		{kv("a", "1 again")},
		{del("b")},
		{persist.DeletePrefix([]byte("p/"))},
		{kv("p/3", "after the prefix went")},
		{del("never-existed")},
	}
	for _, b := range after {
		l.Commit(b)
		state.apply(b)
	}
	l.Close()
	var order []string
	l, rec, err := Open(dir, Options{}, func(k, v []byte) error {
		order = append(order, string(k))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	got, _ := reopen(t, dir)
	sameState(t, got, model{"a": "1 again", "p/3": "after the prefix went", "keep": "k"})
	// The snapshot's surviving keys first, then the log's in write order.
	if fmt.Sprint(order) != "[keep a p/3]" || rec.Keys != 3 || rec.Snapshot == "" {
		t.Fatalf("order %v, recovery %+v", order, rec)
	}
}

func TestDroppedTailIsLogged(t *testing.T) {
	t.Parallel()
	dir, data, ends := logOf(t, [][]persist.Record{{kv("a", "1")}, {kv("b", "2")}})
	os.WriteFile(filepath.Join(dir, segName(0)), data[:ends[1]-3], 0o644)
	var lines []string
	l, rec, err := Open(dir, Options{Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }},
		func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	want := fmt.Sprintf("dropped a torn tail of %d bytes at byte %d of %s", ends[1]-3-ends[0], ends[0], segName(0))
	if len(lines) != 1 || !strings.Contains(lines[0], want) || rec.Keys != 1 {
		t.Fatalf("log %q (want %q), recovery %+v", lines, want, rec)
	}
}

// Relaxed mode writes a full buffer ahead of its tick, without a sync: a
// kill of the process then loses less, and the sync at the tick still
// covers it.
func TestRelaxedWritesAFullBufferAheadOfItsTick(t *testing.T) {
	t.Parallel()
	dir, h := t.TempDir(), &hooks{}
	l := openUntickedRelaxed(t, dir, h)
	value := strings.Repeat("v", 1000)
	want := model{}
	n := 0
	put := func() {
		b := []persist.Record{kv(fmt.Sprintf("m/%06d", n), value)}
		n++
		if err := l.Commit(b); err != nil {
			t.Fatal(err)
		}
		want.apply(b)
	}
	for n*1000 < 2*spillAt {
		put()
	}
	// The spill runs on the log's goroutine: wait for its write, feeding
	// it more while it has not come.
	deadline := time.Now().Add(10 * time.Second)
	for dirBytes(t, dir) < spillAt {
		if time.Now().After(deadline) {
			t.Fatalf("nothing written ahead of the tick after %d KiB enqueued", n)
		}
		put()
		runtime.Gosched()
	}
	if s := h.syncs.Load(); s != 0 {
		t.Fatalf("a spill synced (%d syncs)", s)
	}
	// What a kill now leaves is a prefix, written in order (with a torn
	// tail if a spill was being written).
	got, _ := reopen(t, copyFiles(t, dir))
	if len(got) == 0 {
		t.Fatal("crash copy after a spill: no keys")
	}
	for i := range len(got) {
		if _, ok := got[fmt.Sprintf("m/%06d", i)]; !ok {
			t.Fatalf("crash copy holds %d keys but not m/%06d: not a prefix", len(got), i)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if s := h.syncs.Load(); s != 1 {
		t.Fatalf("Sync took %d fsyncs, want 1", s)
	}
	synced, _ := reopen(t, copyFiles(t, dir))
	sameState(t, synced, want)
	put()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	final, _ := reopen(t, dir)
	sameState(t, final, want)
}

// openUntickedRelaxed opens a relaxed log whose tick never comes in a
// test's time, counting its syncs in h.
func openUntickedRelaxed(t *testing.T, dir string, h *hooks) *Log {
	t.Helper()
	l, _, err := Open(dir, Options{Mode: Relaxed, Interval: 1 << 40, OpenSegment: h.open}, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}
