package oplog

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fanout/fanout/internal/persist"
)

// ordered is a model that also keeps the order of each key's last write,
// which is the order recovery hands a log's keys over in.
type ordered struct {
	vals  map[string]string
	order []string // keys in the order of their last write, with stale ones
	at    map[string]int
	// Set by fanoutOrdered: the keys written or deleted, and the prefixes
	// deleted.
	touched  map[string]bool
	prefixes []string
}

func (o *ordered) prefixed(k string) bool {
	for _, p := range o.prefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

type applier interface{ apply([]persist.Record) }

func newOrdered() *ordered { return &ordered{vals: map[string]string{}, at: map[string]int{}} }

func (o *ordered) apply(batch []persist.Record) {
	for _, r := range batch {
		k := string(r.Key)
		switch r.Op {
		case persist.OpPut:
			o.vals[k] = string(r.Value)
			o.at[k] = len(o.order)
			o.order = append(o.order, k)
		case persist.OpDelete:
			delete(o.vals, k)
			delete(o.at, k)
		case persist.OpDeletePrefix:
			for key := range o.vals {
				if strings.HasPrefix(key, k) {
					delete(o.vals, key)
					delete(o.at, key)
				}
			}
		}
	}
}

// snapshot emits the model's live keys, as a Snapshotter does.
func (o *ordered) snapshot(emit func(k, v []byte) error) error {
	for _, kv := range o.live() {
		k, v, _ := strings.Cut(kv, "=")
		if err := emit([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	return nil
}

func (o *ordered) live() []string {
	var out []string
	for i, k := range o.order {
		if at, ok := o.at[k]; ok && at == i {
			out = append(out, k+"="+o.vals[k])
		}
	}
	return out
}

// randomLog writes batches of puts (values up to 3 KiB), deletes and
// prefix deletes over a few thousand keys: enough bytes for many segments,
// for the index to size itself from a sample and for pages to be released.
func randomLog(r *rand.Rand, l *Log, o applier, bytes int) error {
	for written := 0; written < bytes; {
		n := 1 + r.IntN(10)
		batch := make([]persist.Record, 0, n)
		for range n {
			k := fmt.Sprintf("q%d/m/%04d", r.IntN(8), r.IntN(500))
			switch p := r.IntN(100); {
			case p < 75:
				v := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(3<<10))
				batch = append(batch, kv(k, v))
				written += len(k) + len(v)
			case p < 97:
				batch = append(batch, del(k))
			default:
				batch = append(batch, persist.DeletePrefix([]byte(k[:len("q0/m/0")])))
			}
		}
		if err := l.Commit(batch); err != nil {
			return err
		}
		o.apply(batch)
	}
	return nil
}

// loadOrder recovers dir, handing the Loader views (it copies them).
func loadOrder(t *testing.T, dir string) ([]string, Recovery) {
	t.Helper()
	var got []string
	l, rec, err := Open(dir, Options{LoaderCopies: true}, func(k, v []byte) error {
		got = append(got, string(k)+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return got, rec
}

// A key put, deleted and put again, rewritten, or deleted by a prefix, in
// segments apart from each other, comes back with its last value and in
// the order of its last write.
func TestManySegmentsRecoverInLastWriteOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	l, _, _ := openT(t, dir, Options{SegmentSize: 256 << 10})
	o := newOrdered()
	fixed := [][]persist.Record{
		{kv("x/again", "first"), kv("x/rewritten", "first"), kv("x/gone", "first"), kv("y/1", "first")},
	}
	for _, b := range fixed {
		l.Commit(b)
		o.apply(b)
	}
	if err := randomLog(r, l, o, 3<<20); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]persist.Record{
		{del("x/again"), kv("x/rewritten", "second")},
		{persist.DeletePrefix([]byte("y/"))},
	} {
		l.Commit(b)
		o.apply(b)
	}
	if err := randomLog(r, l, o, 3<<20); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]persist.Record{
		{kv("x/again", "third"), del("x/gone")},
		{kv("y/2", "after the prefix")},
	} {
		l.Commit(b)
		o.apply(b)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, rec := loadOrder(t, dir)
	if want := o.live(); !slices.Equal(got, want) {
		t.Fatalf("recovered %d keys, want %d in this order; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	// 6 MB in 256 KiB segments is 24 of them alone; a segment is started
	// once the one before is synced, so under load they grow past their
	// size and there are fewer.
	if rec.Segments < 8 || rec.Dropped != nil {
		t.Fatalf("recovery %+v: wanted many segments and nothing dropped", rec)
	}
	if !slices.Contains(got, "x/again=third") || !slices.Contains(got, "x/rewritten=second") ||
		slices.Contains(got, "x/gone=first") || !slices.Contains(got, "y/2=after the prefix") {
		t.Fatalf("fixed keys wrong: %v", got[len(got)-3:])
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A snapshot and the segments after it: the snapshot's keys the log does
// not touch, then the log's in the order of their last write.
func TestSnapshotPlusManySegments(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	o := newOrdered()
	snap := o.snapshot
	// Segments of several MiB: pages are released within them.
	l, _, _ := openT(t, dir, Options{SegmentSize: 3 << 20, Snapshot: snap, CompactMin: 1 << 40})
	if err := randomLog(r, l, o, 4<<20); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	before := o.live()
	after := newOrdered()
	if err := randomLog(r, l, &fanoutOrdered{o, after}, 8<<20); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, rec := loadOrder(t, dir)
	var want []string
	for _, kv := range before { // the snapshot's survivors, in its order
		k, _, _ := strings.Cut(kv, "=")
		if _, touched := after.touched[k]; !touched && !after.prefixed(k) {
			want = append(want, kv)
		}
	}
	want = append(want, after.live()...)
	if !slices.Equal(got, want) {
		t.Fatalf("recovered %d keys, want %d in this order; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if rec.Snapshot == "" || rec.Segments < 3 {
		t.Fatalf("recovery %+v", rec)
	}
}

// fanoutOrdered applies to two models: the whole state, and what the log
// since the snapshot did (with which keys it touched and prefixes it
// deleted, which override the snapshot).
type fanoutOrdered struct {
	all, after *ordered
}

func (f *fanoutOrdered) apply(b []persist.Record) {
	f.all.apply(b)
	f.after.apply(b)
	for _, r := range b {
		if r.Op == persist.OpDeletePrefix {
			f.after.prefixes = append(f.after.prefixes, string(r.Key))
		} else {
			if f.after.touched == nil {
				f.after.touched = map[string]bool{}
			}
			f.after.touched[string(r.Key)] = true
		}
	}
}

// A torn or corrupt frame in the middle of the newest segment: what comes
// after it is dropped even where it is whole, so a later batch that
// deleted or rewrote a key of an earlier segment does not count.
func TestTornTailMidIndexKeepsEarlierSegments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		damage        string
		segment, keys int
	}{
		{"checksum", 4 << 10, 40}, {"length", 4 << 10, 40}, {"cut", 4 << 10, 40},
		// Several MiB into a segment: past what the verifier checks in
		// its first words.
		{"checksum", 4 << 20, 12000}, {"cut", 4 << 20, 12000},
	} {
		damage := c.damage
		t.Run(fmt.Sprint(damage, c.segment), func(t *testing.T) {
			dir := t.TempDir()
			l, _, _ := openT(t, dir, Options{SegmentSize: int64(c.segment), Mode: Relaxed})
			o := newOrdered()
			for i := range c.keys { // several segments of keys
				b := []persist.Record{kv(fmt.Sprintf("k/%05d", i), strings.Repeat("v", 500))}
				l.Commit(b)
				o.apply(b)
			}
			l.Commit([]persist.Record{kv("filler", "f")})
			o.apply([]persist.Record{kv("filler", "f")})
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			l.smu.Lock()
			seg, end := l.segNum, l.sizes[l.segNum]
			l.smu.Unlock()
			// Whole frames after the damage would delete and rewrite the
			// earlier segments' keys.
			l.Commit([]persist.Record{del("k/00"), kv("k/01", "rewritten")})
			l.Commit([]persist.Record{persist.DeletePrefix([]byte("k/"))})
			l.Close()
			path := filepath.Join(dir, segName(seg))
			data, _ := os.ReadFile(path)
			switch damage {
			case "checksum":
				data[end+frameHeaderSize+2] ^= 0xff
			case "length":
				data[end+3] = 0x7f
			case "cut":
				data = data[:end+frameHeaderSize+5]
			}
			os.WriteFile(path, data, 0o644)
			got, rec := loadOrder(t, dir)
			if want := o.live(); !slices.Equal(got, want) {
				t.Fatalf("recovered %v, want %v", got, want)
			}
			if d := rec.Dropped; d == nil || d.Offset != end || d.File != segName(seg) || d.Bytes != int64(len(data))-end {
				t.Fatalf("dropped %+v, want from byte %d of %s", rec.Dropped, end, segName(seg))
			}
			if st, _ := os.Stat(path); st.Size() != end {
				t.Fatalf("segment is %d bytes after the repair, want %d", st.Size(), end)
			}
		})
	}
}

// The Loader keeps what it is handed (persist.Loader): nothing it got may
// change or vanish when recovery's mappings are gone.
func TestLoadedSlicesAreTheLoadersToKeep(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	o := newOrdered()
	snap := o.snapshot
	l, _, _ := openT(t, dir, Options{SegmentSize: 256 << 10, Snapshot: snap, CompactMin: 1 << 40})
	randomLog(r, l, o, 1<<20)
	l.Compact()
	randomLog(r, l, o, 1<<20)
	l.Close()
	var keys, vals [][]byte
	l, _, err := Open(dir, Options{}, func(k, v []byte) error {
		keys, vals = append(keys, k), append(vals, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	os.RemoveAll(dir)
	runtime.GC()
	if len(keys) != len(o.vals) {
		t.Fatalf("%d keys loaded, want %d", len(keys), len(o.vals))
	}
	for i, k := range keys {
		if want, ok := o.vals[string(k)]; !ok || !bytes.Equal(vals[i], []byte(want)) {
			t.Fatalf("key %q holds %d bytes after recovery, want %d", k, len(vals[i]), len(want))
		}
		// Appending to one must not write into another's bytes.
		_ = append(keys[i], 'x')
	}
	for i, k := range keys {
		if string(vals[i]) != o.vals[string(k)] {
			t.Fatalf("key %q changed after an append to its neighbour", k)
		}
	}
}

// Keys whose hashes collide in the index are told apart by their bytes.
// Not parallel: it changes the index's hash for its duration, and the
// parallel tests run only after it.
func TestCollidingKeysInTheIndex(t *testing.T) {
	defer func(h func(maphash.Seed, string) uint64) { hashKey = h }(hashKey)
	hashKey = func(_ maphash.Seed, key string) uint64 { return uint64(len(key) % 3) }
	r := rand.New(rand.NewPCG(9, 10))
	dir := t.TempDir()
	o := newOrdered()
	snap := o.snapshot
	l, _, _ := openT(t, dir, Options{SegmentSize: 64 << 10, Snapshot: snap, CompactMin: 1 << 40})
	randomLog(r, l, o, 100<<10)
	l.Compact()
	after := newOrdered()
	randomLog(r, l, &fanoutOrdered{o, after}, 300<<10)
	for _, b := range [][]persist.Record{ // keys of every length, several per hash
		{kv("a", "1"), kv("bb", "2"), kv("ccc", "3"), kv("dddd", "4")},
		{del("bb"), kv("a", "1 again"), persist.DeletePrefix([]byte("dd"))},
		{kv("bb", "back"), kv("eeeee", "5")},
	} {
		l.Commit(b)
		(&fanoutOrdered{o, after}).apply(b)
	}
	l.Close()
	got, _ := loadOrder(t, dir)
	sort.Strings(got)
	want := o.live()
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("recovered %d keys, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
}
