package oplog

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fanout/fanout/internal/persist"
)

// Files in a data dir. Segment and snapshot numbers share one sequence: the
// snapshot numbered n holds the state as of the start of segment n, so
// recovery loads the newest snapshot and replays segments n, n+1, ...
const (
	lockName   = "LOCK"
	segPrefix  = "log-"
	segSuffix  = ".wal"
	snapPrefix = "snap-"
	snapSuffix = ".snap"
	tmpSuffix  = ".tmp"
)

func segName(n uint64) string  { return fmt.Sprintf("%s%016x%s", segPrefix, n, segSuffix) }
func snapName(n uint64) string { return fmt.Sprintf("%s%016x%s", snapPrefix, n, snapSuffix) }

// Recovery says what Open found on disk.
type Recovery struct {
	Keys     int    // live keys handed to the Loader
	Snapshot string // the snapshot loaded, "" if none
	Segments int    // log segments replayed
	Batches  int    // batches replayed from them
	Bytes    int64  // size of the data files
	// Dropped is set when the newest segment ended in a torn or corrupt
	// frame (a crash mid-write): what was cut off and why.
	Dropped *Dropped
}

// Dropped describes a cut-off log tail.
type Dropped struct {
	File   string
	Offset int64 // where the last complete batch ended
	Bytes  int64 // bytes removed from there on
	Reason string
}

func (r Recovery) String() string {
	s := fmt.Sprintf("%d keys from %d bytes (snapshot %q, %d segments, %d batches replayed)",
		r.Keys, r.Bytes, r.Snapshot, r.Segments, r.Batches)
	if d := r.Dropped; d != nil {
		s += fmt.Sprintf("; dropped a torn tail of %d bytes at byte %d of %s: %s", d.Bytes, d.Offset, d.File, d.Reason)
	}
	return s
}

// liveSet is the state the log segments replayed since the snapshot leave:
// each key they wrote with where its latest value lies, in the order of its
// last write, and what they deleted (tombstones, and prefixes), which is
// what decides which of the snapshot's keys still stand. It holds no value
// and copies no key: both lie in the mapped segments, read again when
// they are handed over, so replaying a log costs an index of it, not a
// copy of everything it ever held.
//
// The index is keyed by a hash of the key, not the key: looking a key up
// then reads the bytes of the key found only when the hashes agree (a
// write to a key written before), not on every probe of a million-key
// table, whose keys' pages recovery has given back meanwhile.
type liveSet struct {
	files    []*mapped    // the segments, in order; ents index them
	seed     maphash.Seed // random per process, so keys cannot be chosen to collide
	idx      keyIndex     // hash of a key -> index in ents of its last write
	ents     []liveEntry
	prefixes []string // deleted by OpDeletePrefix
	// expect is the bytes the segments hold; once sizeSample bytes of
	// them are read, their records per byte size idx and ents for all of
	// them, instead of growing them through a million keys.
	expect               int64
	sampleBytes, sampled int64
	sized                bool
	hashes               []uint64 // a batch's, reused
	touched              uint64   // what touching the index read: kept, so that the reads are made
}

// liveEntry is a write: where its key and value lie. It holds no pointer,
// so the collector does not scan a million of them while the Loader runs.
type liveEntry struct {
	key, value int64 // offsets in the file
	file       int32 // index in files
	klen, vlen uint32
	state      entryState
}

type entryState uint8

const (
	entryLive      entryState = iota // a Put, the key's last write
	entryTombstone                   // a Delete, the key's last write
	entryGone                        // written again or deleted since
)

// bigIndex is the number of keys past which the index is worth a
// collection once it is done with.
const bigIndex = 1 << 16

func newLiveSet() *liveSet { return &liveSet{seed: maphash.MakeSeed(), idx: newKeyIndex(0)} }

// add keeps m mapped until the set is done with it and returns its index.
func (s *liveSet) add(m *mapped) int32 {
	s.files = append(s.files, m)
	return int32(len(s.files) - 1)
}

// applyBatch applies one decoded frame of frameBytes bytes of files[file];
// hashes are its keys' (hashOf), or nil.
func (s *liveSet) applyBatch(file int32, recs []persist.Record, hashes []uint64, frameBytes int) {
	if !s.sized {
		s.sampleBytes += int64(frameBytes)
		s.sampled += int64(len(recs))
		if s.sampleBytes >= sizeSample {
			s.sized = true
			s.grow(min(s.expect/s.sampleBytes*s.sampled*9/8, 1<<26))
		}
	}
	// Hash the batch's keys and touch their slots first: each lookup
	// below then finds its slot's line in the cache, or on its way.
	hs, touched := hashes, s.touched
	if hs == nil {
		hs = s.hashes[:0]
		for _, r := range recs {
			hs = append(hs, s.hashOf(unsafe.String(unsafe.SliceData(r.Key), len(r.Key))))
		}
		s.hashes = hs
	}
	for _, h := range hs {
		touched ^= s.idx.touch(h)
	}
	s.touched = touched
	m := s.files[file]
	for i, r := range recs {
		s.apply(m, file, r, hs[i])
	}
}

// sizeSample is how many bytes of frames size the index for the rest: a
// first batch alone (a queue's state) says little about the messages after.
const sizeSample = 1 << 20

// grow makes room for est keys at once.
func (s *liveSet) grow(est int64) {
	if est <= int64(s.idx.live) {
		return
	}
	s.idx = s.idx.resized(int(est))
	s.ents = append(make([]liveEntry, 0, est), s.ents...)
}

// keyOf is the key of ents[i], a view of its segment.
func (s *liveSet) keyOf(i int32) string {
	e := &s.ents[i]
	if e.klen == 0 {
		return ""
	}
	b := s.files[e.file].at(e.key, e.klen)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// hashKey is the index's hash; tests make keys collide with another.
var hashKey = maphash.String

// hashOf is key's hash in the index.
func (s *liveSet) hashOf(key string) uint64 { return hashKey(s.seed, key) }

// find returns the slot of key, whose hash is h, and whether it holds
// key's last write; if not, the slot a write of key should take.
func (s *liveSet) find(key string, h uint64) (slot uint32, ok bool) {
	return s.idx.probe(h, func(i int32) bool { return s.keyOf(i) == key })
}

func (s *liveSet) apply(m *mapped, file int32, r persist.Record, h uint64) {
	// The key is a view of the mapped segment, which outlives idx.
	k := unsafe.String(unsafe.SliceData(r.Key), len(r.Key))
	switch r.Op {
	case persist.OpPut, persist.OpDelete:
		if s.idx.full() {
			s.idx = s.idx.grown()
		}
		slot, ok := s.find(k, h)
		if ok {
			s.ents[s.idx.entry(slot)].state = entryGone
		}
		e := liveEntry{key: m.offset(r.Key), file: file, klen: uint32(len(r.Key))}
		if r.Op == persist.OpPut {
			e.value, e.vlen = m.offset(r.Value), uint32(len(r.Value))
		} else {
			e.state = entryTombstone
		}
		s.idx.set(slot, h, int32(len(s.ents)))
		s.ents = append(s.ents, e)
	case persist.OpDeletePrefix:
		// No tombstones: the prefix itself overrides the snapshot's keys.
		s.idx.each(func(slot uint32, i int32) {
			if strings.HasPrefix(s.keyOf(i), k) {
				s.ents[i].state = entryGone
				s.idx.remove(slot)
			}
		})
		s.prefixes = append(s.prefixes, strings.Clone(k))
	}
}

// overrides reports whether the segments decide key's fate, so the
// snapshot's value for it no longer counts. h is key's hash, if known
// (hashed is set).
func (s *liveSet) overrides(key []byte, h uint64, hashed bool) bool {
	k := unsafe.String(unsafe.SliceData(key), len(key))
	if s.idx.live > 0 {
		if !hashed {
			h = s.hashOf(k)
		}
		if _, ok := s.find(k, h); ok {
			return true
		}
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(string(key), p) {
			return true
		}
	}
	return false
}

// each hands the live keys to load in the order of their last write, which
// is the order of the segments' bytes, giving each segment's pages back
// once it is past them.
func (s *liveSet) each(h *handover, load persist.Loader) (int, error) {
	if s.idx.live > bigIndex {
		// The index is most of the heap now, and the Loader is about to
		// fill the engines' memory: free it, and give its pages back, so
		// that they do not add to that memory's peak.
		s.idx = keyIndex{}
		debug.FreeOSMemory()
	}
	s.idx = keyIndex{}
	for _, m := range s.files { // what finding keys touched again
		m.releaseAll()
	}
	n := 0
	done := 0 // files[:done] are unmapped
	for _, e := range s.ents {
		if e.state != entryLive {
			continue
		}
		for ; done < int(e.file); done++ {
			s.files[done].close()
		}
		m := s.files[e.file]
		m.releaseTo(e.key)
		key, value := h.kv(m.at(e.key, e.klen), m.at(e.value, e.vlen))
		if err := load(key, value); err != nil {
			return n, err
		}
		n++
	}
	s.ents = nil
	return n, nil
}

func (s *liveSet) close() {
	for _, m := range s.files {
		m.close()
	}
}

// handover copies what recovery hands the Loader, whose slices are its to
// keep, into shared blocks: one allocation per handoverBlock bytes rather
// than one per key. When the Loader copies what it keeps (as the engines
// do), a block is garbage once recovery has passed it, and the collector
// reuses it; a Loader that says so (Options.LoaderCopies) is handed the
// views themselves.
type handover struct {
	views bool
	free  []byte
}

const handoverBlock = 1 << 20

func (h *handover) kv(k, v []byte) (key, value []byte) {
	if h.views {
		return k, v
	}
	n := len(k) + len(v)
	var b []byte
	if n > handoverBlock/8 {
		b = make([]byte, n)
	} else {
		if n > len(h.free) {
			h.free = make([]byte, handoverBlock)
		}
		b, h.free = h.free[:n:n], h.free[n:]
	}
	copy(b, k)
	copy(b[len(k):], v)
	return b[:len(k):len(k)], b[len(k):]
}

// dirFiles lists the snapshot and segment numbers in dir, sorted.
func dirFiles(dir string) (snaps, segs []uint64, tmps []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, tmpSuffix):
			tmps = append(tmps, name)
		case strings.HasPrefix(name, segPrefix) && strings.HasSuffix(name, segSuffix):
			if n, ok := parseNum(name, segPrefix, segSuffix); ok {
				segs = append(segs, n)
			}
		case strings.HasPrefix(name, snapPrefix) && strings.HasSuffix(name, snapSuffix):
			if n, ok := parseNum(name, snapPrefix, snapSuffix); ok {
				snaps = append(snaps, n)
			}
		}
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i] < snaps[j] })
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	return snaps, segs, tmps, nil
}

func parseNum(name, prefix, suffix string) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix), 16, 64)
	return n, err == nil
}

// recoverDir hands dir's live state to load and repairs a torn tail. It
// indexes the segments first, so a damaged one fails before load sees
// anything, then streams the snapshot past what they override, then hands
// over what the segments left, reading each value where it lies. It
// returns the number the next segment should get and the sizes of the
// segments kept.
func recoverDir(dir string, rec *Recovery, load persist.Loader, views bool) (next uint64, snapSeq uint64, sizes map[uint64]int64, err error) {
	snaps, segs, tmps, err := dirFiles(dir)
	if err != nil {
		return 0, 0, nil, err
	}
	for _, t := range tmps { // a snapshot or segment whose writing a crash interrupted
		if err := os.Remove(filepath.Join(dir, t)); err != nil {
			return 0, 0, nil, err
		}
	}
	set := newLiveSet()
	defer set.close()
	h := &handover{views: views}
	sizes = map[uint64]int64{}
	if len(snaps) > 0 {
		snapSeq = snaps[len(snaps)-1]
		next = snapSeq
	}
	var replay []uint64
	for _, n := range segs {
		if n >= snapSeq {
			replay = append(replay, n)
			set.expect += fileSize(filepath.Join(dir, segName(n)))
		} else if err := os.Remove(filepath.Join(dir, segName(n))); err != nil {
			// Replaced by the snapshot; a crash came before compaction
			// deleted it.
			return 0, 0, nil, err
		}
	}
	for _, n := range snaps[:max(len(snaps)-1, 0)] {
		if err := os.Remove(filepath.Join(dir, snapName(n))); err != nil {
			return 0, 0, nil, err
		}
	}
	for i, n := range replay {
		if i > 0 && n != replay[i-1]+1 || i == 0 && len(snaps) > 0 && n != snapSeq {
			return 0, 0, nil, fmt.Errorf("oplog: %s: log segment %s is missing", dir, segName(expected(i, replay, snapSeq)))
		}
		last := i == len(replay)-1
		size, batches, err := replaySegment(dir, segName(n), set, last, rec)
		if err != nil {
			return 0, 0, nil, err
		}
		if size < 0 { // removed: its number is free again
			next = n
			break
		}
		rec.Segments++
		rec.Batches += batches
		rec.Bytes += size
		sizes[n] = size
		next = n + 1
	}
	if len(snaps) > 0 {
		name := snapName(snapSeq)
		size, keys, err := loadSnapshot(filepath.Join(dir, name), set, h, load)
		if err != nil {
			return 0, 0, nil, err
		}
		rec.Snapshot = name
		rec.Bytes += size
		rec.Keys += keys
	}
	keys, err := set.each(h, load)
	rec.Keys += keys
	if err != nil {
		return 0, 0, nil, fmt.Errorf("oplog: loading %s: %w", dir, err)
	}
	return next, snapSeq, sizes, nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func expected(i int, replay []uint64, snapSeq uint64) uint64 {
	if i == 0 {
		return snapSeq
	}
	return replay[i-1] + 1
}

// openMapped opens path (read-write for a segment recovery may cut) and
// maps all of it.
func openMapped(path string, flag int) (*os.File, *mapped, error) {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var m *mapped
		if m, err = mapFile(f, st.Size()); err == nil {
			return f, m, nil
		}
	}
	f.Close()
	return nil, nil, fmt.Errorf("oplog: %w", err)
}

// loadSnapshot hands the snapshot's keys that the segments do not
// override to load. Snapshots are renamed into place only once complete and
// synced, so any flaw in one is damage, not a crash.
func loadSnapshot(path string, set *liveSet, h *handover, load persist.Loader) (size int64, keys int, err error) {
	f, m, err := openMapped(path, os.O_RDONLY)
	if err != nil {
		return 0, 0, err
	}
	f.Close() // the mapping stays
	defer m.close()
	name := filepath.Base(path)
	if err := checkHeader(m.data, snapMagic, name); err != nil {
		if err == errShortHeader {
			return 0, 0, fmt.Errorf("oplog: snapshot %s is cut short", name)
		}
		return 0, 0, fmt.Errorf("oplog: %w", err)
	}
	var hash func(string) uint64
	if set.idx.live > 0 {
		hash = set.hashOf // for overrides
	}
	fs := &frameScanner{data: m.data, off: headerSize, checked: startDecoder(m.data, headerSize, true, hash)}
	defer fs.checked.stop() // before the unmapping deferred above
	var recs []persist.Record
	var count uint64
	for {
		at := fs.off
		p, err := fs.next()
		if err == io.EOF {
			return 0, 0, fmt.Errorf("oplog: snapshot %s has no end frame (damaged)", name)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("oplog: snapshot %s is damaged: %w", name, err)
		}
		if n, ok := decodeEnd(p); ok {
			if n != count {
				return 0, 0, fmt.Errorf("oplog: snapshot %s holds %d records but says %d", name, count, n)
			}
			return fs.off, keys, nil
		}
		batch, hashes, ok := fs.checked.ahead.batch(at)
		if !ok {
			if recs, err = decodeBatch(p, recs); err != nil {
				return 0, 0, fmt.Errorf("oplog: snapshot %s: frame at byte %d: %w", name, at, err)
			}
			batch = recs
		}
		for i, r := range batch {
			if r.Op != persist.OpPut {
				return 0, 0, fmt.Errorf("oplog: snapshot %s holds a record with op %d", name, r.Op)
			}
			var kh uint64
			if hashes != nil {
				kh = hashes[i]
			}
			if set.overrides(r.Key, kh, hashes != nil) {
				continue
			}
			if err := load(h.kv(r.Key, r.Value)); err != nil {
				return 0, 0, fmt.Errorf("oplog: loading %s: %w", name, err)
			}
			keys++
		}
		count += uint64(len(batch))
		m.releaseTo(at)
	}
}

// replaySegment indexes one segment and returns its size (-1 if it was
// removed as never used). Only the newest may end torn: its tail is cut
// off (and the file truncated there) and reported; an older one was synced
// before the next was started, so a flaw in it is refused. The segment
// stays mapped until set is closed.
func replaySegment(dir, name string, set *liveSet, last bool, rec *Recovery) (size int64, batches int, err error) {
	path := filepath.Join(dir, name)
	f, m, err := openMapped(path, os.O_RDWR)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	file := set.add(m) // unmapped with the set
	fileBytes := int64(len(m.data))
	if err := checkHeader(m.data, logMagic, name); err != nil {
		if err == errShortHeader && last {
			// Created but never used: nothing in it was acknowledged.
			rec.Dropped = &Dropped{File: name, Offset: 0, Bytes: fileBytes, Reason: "segment header cut short"}
			return -1, 0, os.Remove(path)
		}
		if err == errShortHeader {
			return 0, 0, fmt.Errorf("oplog: segment %s is cut short but is not the newest", name)
		}
		return 0, 0, fmt.Errorf("oplog: %w", err)
	}
	fs := &frameScanner{data: m.data, off: headerSize, checked: startDecoder(m.data, headerSize, true, set.hashOf)}
	defer fs.checked.stop()
	var recs []persist.Record
	for {
		at := fs.off
		p, err := fs.next()
		if err == io.EOF {
			if last && fs.off == headerSize {
				// Never written to (a start and stop with nothing to
				// keep): reuse its number rather than pile them up.
				return -1, 0, os.Remove(path)
			}
			return fs.off, batches, nil
		}
		if err == errZeros {
			if fs.zeroTail() {
				// The preallocated rest, never written: cut it off so
				// the file holds its data only (the mapping past it is
				// never read again).
				if fs.off == headerSize && last {
					return -1, 0, os.Remove(path)
				}
				fs.checked.stop() // it reads no byte past the cut
				if err := f.Truncate(fs.off); err != nil {
					return 0, 0, err
				}
				return fs.off, batches, f.Sync()
			}
			err = &tornError{fs.off, "a frame header of zeros followed by data"}
		}
		var torn *tornError
		if errors.As(err, &torn) {
			if !last {
				return 0, 0, fmt.Errorf("oplog: segment %s is damaged (%v) but is not the newest: refusing to guess", name, torn)
			}
			rec.Dropped = &Dropped{File: name, Offset: torn.Offset, Bytes: fileBytes - torn.Offset, Reason: torn.Reason}
			// The mapping past torn.Offset is never read again.
			fs.checked.stop()
			if err := f.Truncate(torn.Offset); err != nil {
				return 0, 0, err
			}
			return torn.Offset, batches, f.Sync()
		}
		if err != nil {
			return 0, 0, err
		}
		batch, hashes, ok := fs.checked.ahead.batch(at)
		if !ok {
			if recs, err = decodeBatch(p, recs); err != nil {
				return 0, 0, fmt.Errorf("oplog: segment %s: frame at byte %d: %w", name, at, err)
			}
			batch, hashes = recs, nil
		}
		set.applyBatch(file, batch, hashes, len(p))
		batches++
		// Its pages are read again when the values are handed over;
		// meanwhile they need not count in the process's memory.
		m.releaseTo(at)
	}
}
