package oplog

import (
	"bufio"
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
	limit := max(l.opts.CompactMin, int64(l.opts.CompactRatio*float64(l.snapSize)))
	start := !l.compactOn && logBytes > limit
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
	size, err := l.writeSnapshot(path)
	if err != nil {
		return err
	}

	l.smu.Lock()
	old := l.snapSeq
	l.snapSeq, l.snapSize = seq, size
	var drop []uint64
	for n := range l.sizes {
		if n < seq {
			drop = append(drop, n)
			delete(l.sizes, n)
		}
	}
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
// file, synced and renamed into place only when complete.
func (l *Log) writeSnapshot(path string) (int64, error) {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	size := int64(headerSize)
	if _, err := w.Write(header(snapMagic)); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	var (
		frame   []byte
		batch   []persist.Record
		pending int
		count   uint64
	)
	flushBatch := func() error {
		if len(batch) == 0 {
			return nil
		}
		var err error
		if frame, err = appendBatch(frame[:0], batch); err != nil {
			return err
		}
		if _, err := w.Write(frame); err != nil {
			return err
		}
		size += int64(len(frame))
		count += uint64(len(batch))
		batch, pending = batch[:0], 0
		return nil
	}
	// Keys and values are copied: the caller may reuse its buffers.
	emit := func(key, value []byte) error {
		batch = append(batch, persist.Put(append([]byte(nil), key...), append([]byte(nil), value...)))
		pending += len(key) + len(value) + 8
		if pending >= snapshotChunk {
			return flushBatch()
		}
		return nil
	}
	if err := l.opts.Snapshot(emit); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	if err := flushBatch(); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	if frame, err = appendEnd(frame[:0], count); err != nil {
		return 0, err
	}
	if _, err := w.Write(frame); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	size += int64(len(frame))
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	ok = true
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	if err := syncDir(l.dir); err != nil {
		return 0, fmt.Errorf("oplog: snapshot: %w", err)
	}
	return size, nil
}
