package oplog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
// each key they wrote with its latest value, in the order of its last
// write, and what they deleted (tombstones, and prefixes), which is what
// decides which of the snapshot's keys still stand.
type liveSet struct {
	idx      map[string]int // key -> index in ents, or -1 for a deleted key
	ents     []liveEntry
	prefixes []string // deleted by OpDeletePrefix
	// expect is the bytes the segments hold; with the first batch's bytes
	// per record it sizes idx and ents once instead of growing them through
	// a million keys (which was most of a recovery's time).
	expect int64
	sized  bool
}

type liveEntry struct {
	kv   []byte // key then value, one allocation handed to the Loader
	klen int
}

const tombstone = -1

func newLiveSet() *liveSet { return &liveSet{idx: map[string]int{}} }

// applyBatch applies one decoded frame of frameBytes bytes.
func (s *liveSet) applyBatch(recs []persist.Record, frameBytes int) {
	if !s.sized && len(recs) > 0 && frameBytes > 0 {
		s.sized = true
		est := min(s.expect/int64(frameBytes)*int64(len(recs)), 1<<26)
		if est > int64(len(s.idx)) {
			idx := make(map[string]int, est)
			for k, i := range s.idx {
				idx[k] = i
			}
			s.idx = idx
			s.ents = append(make([]liveEntry, 0, est), s.ents...)
		}
	}
	for _, r := range recs {
		s.apply(r)
	}
}

// kill drops key's entry, if any, and leaves a tombstone. The map's key is
// deleted and inserted afresh: a map keeps the key it was first given, and
// a Put's key points into the entry's buffer, which must not stay reachable.
func (s *liveSet) kill(key []byte) {
	if i, ok := s.idx[string(key)]; ok {
		if i != tombstone {
			s.ents[i] = liveEntry{}
		}
		delete(s.idx, string(key))
	}
	s.idx[string(key)] = tombstone
}

func (s *liveSet) apply(r persist.Record) {
	switch r.Op {
	case persist.OpPut:
		kv := joinKV(r.Key, r.Value)
		// The map key shares the entry's buffer (one allocation per record,
		// not two); the map is not used once each hands the buffers over.
		k := unsafe.String(unsafe.SliceData(kv), len(r.Key))
		if i, ok := s.idx[k]; ok {
			if i != tombstone {
				s.ents[i] = liveEntry{}
			}
			delete(s.idx, k)
		}
		s.idx[k] = len(s.ents)
		s.ents = append(s.ents, liveEntry{kv: kv, klen: len(r.Key)})
	case persist.OpDelete:
		s.kill(r.Key)
	case persist.OpDeletePrefix:
		// No tombstones: the prefix itself overrides the snapshot's keys.
		p := string(r.Key)
		for k, i := range s.idx {
			if strings.HasPrefix(k, p) {
				if i != tombstone {
					s.ents[i] = liveEntry{}
				}
				delete(s.idx, k)
			}
		}
		s.prefixes = append(s.prefixes, p)
	}
}

// overrides reports whether the segments decide key's fate, so the
// snapshot's value for it no longer counts.
func (s *liveSet) overrides(key []byte) bool {
	if _, ok := s.idx[string(key)]; ok {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(string(key), p) {
			return true
		}
	}
	return false
}

func (s *liveSet) each(load persist.Loader) (int, error) {
	s.idx = nil // its keys point into the buffers handed over below
	n := 0
	for i := range s.ents {
		e := &s.ents[i]
		if e.kv == nil {
			continue
		}
		if err := load(e.kv[:e.klen:e.klen], e.kv[e.klen:]); err != nil {
			return n, err
		}
		*e = liveEntry{} // handed over: let it go
		n++
	}
	return n, nil
}

func joinKV(k, v []byte) []byte {
	kv := make([]byte, len(k)+len(v))
	copy(kv, k)
	copy(kv[len(k):], v)
	return kv
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
// replays the segments first, so a damaged one fails before load sees
// anything, then streams the snapshot past what they override (without
// holding it in memory), then hands over what the segments left. It returns
// the number the next segment should get and the sizes of the segments kept.
func recoverDir(dir string, rec *Recovery, load persist.Loader) (next uint64, snapSeq uint64, sizes map[uint64]int64, err error) {
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
		size, keys, err := loadSnapshot(filepath.Join(dir, name), set, load)
		if err != nil {
			return 0, 0, nil, err
		}
		rec.Snapshot = name
		rec.Bytes += size
		rec.Keys += keys
	}
	keys, err := set.each(load)
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

// loadSnapshot hands the snapshot's keys that the segments do not
// override to load. Snapshots are renamed into place only once complete and
// synced, so any flaw in one is damage, not a crash.
func loadSnapshot(path string, set *liveSet, load persist.Loader) (size int64, keys int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	name := filepath.Base(path)
	if err := checkHeader(f, snapMagic, name); err != nil {
		if err == errShortHeader {
			return 0, 0, fmt.Errorf("oplog: snapshot %s is cut short", name)
		}
		return 0, 0, fmt.Errorf("oplog: %w", err)
	}
	fr := newFrameReader(f, headerSize)
	var recs []persist.Record
	var count uint64
	for {
		p, err := fr.next()
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
			return fr.off, keys, nil
		}
		if recs, err = decodeBatch(p, recs); err != nil {
			return 0, 0, fmt.Errorf("oplog: snapshot %s: frame at byte %d: %w", name, fr.off, err)
		}
		for _, r := range recs {
			if r.Op != persist.OpPut {
				return 0, 0, fmt.Errorf("oplog: snapshot %s holds a record with op %d", name, r.Op)
			}
			if set.overrides(r.Key) {
				continue
			}
			kv := joinKV(r.Key, r.Value)
			if err := load(kv[:len(r.Key):len(r.Key)], kv[len(r.Key):]); err != nil {
				return 0, 0, fmt.Errorf("oplog: loading %s: %w", name, err)
			}
			keys++
		}
		count += uint64(len(recs))
	}
}

// replaySegment applies one segment and returns its size (-1 if it was
// removed as never used). Only the newest may end torn: its tail
// is cut off (and the file truncated there) and reported; an older one was
// synced before the next was started, so a flaw in it is refused.
func replaySegment(dir, name string, set *liveSet, last bool, rec *Recovery) (size int64, batches int, err error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if err := checkHeader(f, logMagic, name); err != nil {
		if err == errShortHeader && last {
			// Created but never used: nothing in it was acknowledged.
			rec.Dropped = &Dropped{File: name, Offset: 0, Bytes: st.Size(), Reason: "segment header cut short"}
			return -1, 0, os.Remove(path)
		}
		if err == errShortHeader {
			return 0, 0, fmt.Errorf("oplog: segment %s is cut short but is not the newest", name)
		}
		return 0, 0, fmt.Errorf("oplog: %w", err)
	}
	fr := newFrameReader(f, headerSize)
	var recs []persist.Record
	for {
		p, err := fr.next()
		if err == io.EOF {
			if last && fr.off == headerSize {
				// Never written to (a start and stop with nothing to
				// keep): reuse its number rather than pile them up.
				return -1, 0, os.Remove(path)
			}
			return fr.off, batches, nil
		}
		var torn *tornError
		if errors.As(err, &torn) {
			if !last {
				return 0, 0, fmt.Errorf("oplog: segment %s is damaged (%v) but is not the newest: refusing to guess", name, torn)
			}
			rec.Dropped = &Dropped{File: name, Offset: torn.Offset, Bytes: st.Size() - torn.Offset, Reason: torn.Reason}
			if err := f.Truncate(torn.Offset); err != nil {
				return 0, 0, err
			}
			return torn.Offset, batches, f.Sync()
		}
		if err != nil {
			return 0, 0, err
		}
		if recs, err = decodeBatch(p, recs); err != nil {
			return 0, 0, fmt.Errorf("oplog: segment %s: frame at byte %d: %w", name, fr.off, err)
		}
		set.applyBatch(recs, len(p))
		batches++
	}
}
