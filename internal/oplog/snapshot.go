package oplog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fanout/fanout/internal/persist"
)

// ErrNoSnapshotter is returned by Compact on a log opened without one.
var ErrNoSnapshotter = errors.New("oplog: compaction needs Options.Snapshot")

// maybeCompact starts a compaction in the background once the segments
// since the last snapshot outgrow it; called by the flusher after a flush.
func (l *Log) maybeCompact() {
	if l.opts.Snapshot == nil {
		return
	}
	l.smu.Lock()
	var logBytes int64
	for _, s := range l.sizes {
		logBytes += s
	}
	var t tally
	for _, c := range l.tallies {
		t.add(c)
	}
	start := !l.compactOn && l.compactDue(logBytes, t)
	if start {
		l.compactOn = true
		l.compacting.Add(1)
	}
	l.smu.Unlock()
	if !start {
		return
	}
	go func() {
		defer l.compacting.Done()
		if err := l.Compact(); err != nil && !errors.Is(err, errCompactClosed) {
			l.opts.Logf("oplog: %s: compaction failed, the log keeps growing until one succeeds: %v", l.dir, err)
		}
		l.smu.Lock()
		l.compactOn = false
		l.smu.Unlock()
	}()
}

// compactDue decides, from the log's bytes since the snapshot and the
// records written to it, whether a snapshot would reclaim enough: about
// half of what the data dir holds. A delete makes itself and (roughly) the
// record it deletes garbage; how many bytes that is, the last compaction
// measured (what it reclaimed per delete), and until one did, twice a
// record's average size stands in. Weighing by bytes matters where big records live
// on next to deleted small ones (a Publish to three queues of which one is
// drained: four of its six records die, but a third of its bytes). A log
// whose garbage is under half mostly grows, and is left to grow to
// CompactGrowth × the snapshot (which still bounds the garbage of
// overwrites, which the log cannot see). Called with smu held.
func (l *Log) compactDue(logBytes int64, t tally) bool {
	if logBytes <= max(l.opts.CompactMin, int64(l.opts.CompactRatio*float64(l.snapSize))) {
		return false
	}
	perDelete := l.perDelete
	if perDelete == 0 && t.recs > 0 {
		perDelete = 2 * float64(logBytes) / float64(t.recs)
	}
	if dead := float64(t.dels) * perDelete; 2*dead >= float64(l.snapSize+logBytes) {
		return true
	}
	return logBytes > max(l.opts.CompactMin, int64(l.opts.CompactGrowth*float64(l.snapSize)))
}

// measureReclaimed sets perDelete from a compaction that replaced a
// snapshot of oldSize and segments of logBytes holding t with a snapshot of
// newSize, bounded by twice the replaced records' average size (a delete
// kills one record and itself; a few deletes among many overwrites must
// not make the next compaction eager). Called with smu held.
func (l *Log) measureReclaimed(oldSize, logBytes, newSize int64, t tally) {
	if t.dels == 0 || t.recs == 0 {
		return
	}
	perDelete := float64(oldSize+logBytes-newSize) / float64(t.dels)
	l.perDelete = min(max(perDelete, 1), 2*float64(logBytes)/float64(t.recs))
}

// Compact writes the caller's current state as a snapshot and deletes the
// segments and the snapshot it replaces. Appends go on meanwhile: they go to
// the new segment that the snapshot's number names, and recovery replays
// that segment on top of the snapshot (see persist's compaction contract).
func (l *Log) Compact() error {
	if l.opts.Snapshot == nil {
		return ErrNoSnapshotter
	}
	l.compactMu.Lock()
	defer l.compactMu.Unlock()

	reply := make(chan rotated, 1)
	select {
	case l.rotate <- reply:
	case <-l.done:
		return errCompactClosed
	}
	r := <-reply
	if r.err != nil {
		return r.err
	}
	seq := r.seg
	path := filepath.Join(l.dir, snapName(seq))
	size, recs, err := l.writeSnapshot(path)
	if err != nil {
		return err
	}

	l.smu.Lock()
	old := l.snapSeq
	var drop []uint64
	var replaced int64
	var t tally
	for n, sz := range l.sizes {
		if n < seq {
			drop = append(drop, n)
			replaced += sz
			t.add(l.tallies[n])
			delete(l.sizes, n)
			delete(l.tallies, n)
		}
	}
	l.measureReclaimed(l.snapSize, replaced, size, t)
	l.snapSeq, l.snapSize, l.snapRecs = seq, size, int64(recs)
	l.smu.Unlock()
	// From here the new snapshot is the one recovery uses; what follows only
	// frees space, and a crash midway leaves files recovery ignores.
	var errs []error
	for _, n := range drop {
		errs = append(errs, removeIfExists(filepath.Join(l.dir, segName(n))))
	}
	if old != seq {
		errs = append(errs, removeIfExists(filepath.Join(l.dir, snapName(old))))
	}
	return errors.Join(errs...)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// snapshotChunk is how many bytes of records go in one snapshot frame.
const snapshotChunk = 256 << 10

// writeSnapshot streams the Snapshotter's state into path via a temporary
// file, synced and renamed into place only when complete, and returns its
// size and records. Records are encoded straight into the chunk's frame
// (room for the frame's header and count is left in front), and each
// chunk goes to the file in one write.
func (l *Log) writeSnapshot(path string) (size int64, records uint64, err error) {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	fail := func(err error) (int64, uint64, error) { return 0, 0, fmt.Errorf("oplog: snapshot: %w", err) }
	if _, err := f.Write(header(snapMagic)); err != nil {
		return fail(err)
	}
	size = headerSize
	const room = frameHeaderSize + 1 + binary.MaxVarintLen64
	chunk := make([]byte, room, room+snapshotChunk+64<<10)
	var inChunk uint64
	// The snapshot's blocks are reserved ahead of its writes, as a relaxed
	// segment's are (reserveAhead), and what is left over is cut off at
	// the end.
	reserved, noReserve := size, false
	reserve := func(end int64) {
		if end > reserved && !noReserve {
			target := (end + reserveStep - 1) / reserveStep * reserveStep
			if reserveBlocks(f, reserved, target-reserved) != nil {
				noReserve = true
				return
			}
			reserved = target
		}
	}
	flushChunk := func() error {
		if inChunk == 0 {
			return nil
		}
		var n [binary.MaxVarintLen64]byte
		nl := binary.PutUvarint(n[:], inChunk)
		start := room - nl - 1 - frameHeaderSize
		chunk[start+frameHeaderSize] = frameBatch
		copy(chunk[start+frameHeaderSize+1:], n[:nl])
		frame, err := sealFrame(chunk, start)
		if err != nil {
			return err
		}
		reserve(size + int64(len(frame)-start))
		if _, err := f.Write(frame[start:]); err != nil {
			return err
		}
		size += int64(len(frame) - start)
		records += inChunk
		chunk, inChunk = chunk[:room], 0
		return nil
	}
	// The caller may reuse key and value once emit returns: they are
	// copied into the chunk.
	emit := func(key, value []byte) error {
		chunk = appendRecord(chunk, persist.OpPut, key, value)
		inChunk++
		if len(chunk)-room >= snapshotChunk {
			return flushChunk()
		}
		return nil
	}
	if err := l.opts.Snapshot(emit); err != nil {
		return fail(err)
	}
	if err := flushChunk(); err != nil {
		return fail(err)
	}
	end, err := appendEnd(nil, records)
	if err != nil {
		return 0, 0, err
	}
	if _, err := f.Write(end); err != nil {
		return fail(err)
	}
	size += int64(len(end))
	if reserved > size {
		if err := f.Truncate(size); err != nil { // the reserved blocks left over
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	ok = true
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := syncDir(l.dir); err != nil {
		return fail(err)
	}
	return size, records, nil
}
