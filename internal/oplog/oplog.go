// Package oplog is fanout's durable store: an append-only log of batches
// with periodic snapshots, behind the persist.Store contract.
//
// Writers enqueue encoded batches into a buffer; a writer goroutine writes
// the buffer to the segment and hands its group to a syncer goroutine, and
// every batch written before an fdatasync began is acknowledged by that one
// sync (group commit). The two overlap: while the disk syncs one group, the
// next is written, and its sync starts the moment the first ends. In
// durable mode a segment is preallocated (written with zeros ahead of its
// data), so a sync writes data only: no size change for the file system's
// journal to commit, which halves a sync on ext4. A relaxed mode
// acknowledges at enqueue and syncs at most every Interval. When the log has grown well past the last snapshot,
// the log asks the caller's Snapshotter for the current state, writes it as
// a new snapshot and deletes the segments it replaces, so disk use follows
// the live state, not the history. docs/durability-store.md says why this
// beat the embedded key-value stores and SQLite.
package oplog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/internal/persist"
)

// Mode is how durable an acknowledged batch is.
type Mode int

const (
	// Durable acknowledges a batch only after it is fsync'd.
	Durable Mode = iota
	// Relaxed acknowledges at enqueue and writes and fsyncs what was
	// enqueued every Options.Interval: a crash (of the process or of the
	// machine: batches wait in the process's buffer until the tick) may
	// lose the last Interval of acknowledged batches, never part of one.
	Relaxed
)

// Options tune a Log; the zero value is durable with default sizes.
type Options struct {
	Mode     Mode
	Interval time.Duration // Relaxed: the longest a batch waits for its fsync; default 100ms
	// SegmentSize starts a new segment once the current one is this big;
	// default 64 MiB.
	SegmentSize int64
	// Snapshot, if set, lets the log compact itself: once the segments since
	// the last snapshot hold more than max(CompactMin, CompactRatio × the
	// snapshot's size) bytes, it writes a new snapshot from Snapshot.
	// A log that mostly grows (sends, no deletes) is compacted only at
	// CompactGrowth × the snapshot's size: rewriting live records buys no
	// disk, and a snapshot of a big backlog costs a write of all of it.
	Snapshot      persist.Snapshotter
	CompactMin    int64   // default 8 MiB: the floor for a small live state
	CompactRatio  float64 // default 2
	CompactGrowth float64 // default 8
	// Logf receives one line per event worth an operator's eye (a dropped
	// tail, a failed compaction, a disk that refuses writes); nil discards
	// them.
	Logf func(format string, args ...any)
	// LoaderCopies says the Loader copies whatever it keeps of the slices
	// it is handed: recovery then hands it views of the files it reads,
	// valid during the call only, rather than copies that are the Loader's
	// to keep (persist.Loader), which saves copying every value once more.
	LoaderCopies bool
	// OpenSegment opens a segment for appending; default os.OpenFile. Tests
	// wrap the file to fail as a full or broken disk does.
	OpenSegment func(path string) (SegmentFile, error)
	// Prealloc is how far ahead of its data a durable segment is filled
	// with zeros; default 4 MiB (or SegmentSize, if smaller). Relaxed mode
	// does not write zeros (its few syncs gain nothing from it); it
	// reserves the blocks ahead instead (see reserveAhead).
	Prealloc int64
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.SegmentSize <= 0 {
		o.SegmentSize = 64 << 20
	}
	if o.CompactMin <= 0 {
		o.CompactMin = 8 << 20
	}
	if o.CompactRatio <= 0 {
		o.CompactRatio = 2
	}
	if o.CompactGrowth <= 0 {
		o.CompactGrowth = max(8, o.CompactRatio)
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.OpenSegment == nil {
		o.OpenSegment = openDataFile
	}
	if o.Prealloc <= 0 {
		o.Prealloc = min(4<<20, o.SegmentSize)
	}
	if o.Mode == Relaxed {
		o.Prealloc = 0
	}
}

// SegmentFile is what the flusher needs of a segment: an *os.File, or in
// tests one that fails like a full disk. Sync makes what was written
// durable; the default's is fdatasync where the system has it.
type SegmentFile interface {
	WriteAt(p []byte, off int64) (int, error)
	Sync() error
	Truncate(int64) error
	Close() error
}

// Log is an open data dir. It implements persist.Store.
type Log struct {
	dir  string
	opts Options
	lock *os.File

	mu      sync.Mutex
	buf     []byte // frames enqueued and not yet handed to the flusher
	bufRecs tally  // the records in buf
	group   *group // the group those frames belong to
	failed  error  // set after an fsync failure: nothing can be promised any more
	closed  bool

	full   chan struct{} // a flusher found the segment full (capacity 1)
	spillC chan struct{} // relaxed mode: buf passed spillAt (capacity 1)
	// spilled says frames of the current group were written ahead of
	// its flush (relaxed mode); guarded by mu.
	spilled bool
	rotate  chan chan rotated // compaction asks the flusher for a new segment
	syncReq chan chan error
	closing chan struct{}
	done    chan struct{} // closed when the flusher has exited

	// Owned by the writer goroutine (flushLoop).
	seg     SegmentFile
	segNum  uint64
	segSize int64 // where the data ends and the next group is written
	alloc   int64 // the file's size: the data, then preallocated zeros
	// noPrealloc is set once preallocating failed in this segment.
	noPrealloc bool
	// reserved is where the blocks reserved past the data end (relaxed
	// mode; the file's size stays at its data); noReserve is set once
	// reserving failed in this segment.
	reserved  int64
	noReserve bool
	spare     []byte

	// The syncers' queue: groups written to segment segNum and not yet
	// synced, in write order; the n-th group written has seq n.
	syncMu    sync.Mutex
	syncWake  *sync.Cond // there is something to write or to sync, or the log closes
	synced    *sync.Cond // a write or a sync ended
	unsynced  []*group
	pending   bool   // durable mode: frames are enqueued, unwritten
	writing   bool   // a goroutine is writing (it owns seg, segSize, alloc)
	settled   uint64 // seq of the last group settled
	written   uint64 // seq of the last group written
	started   uint64 // the highest seq a running or ended sync covers
	syncing   int    // syncs running
	syncSeg   uint64 // the segment the written groups are in
	syncStop  bool
	syncersWG sync.WaitGroup

	smu      sync.Mutex       // guards the fields below (flusher and compaction)
	sizes    map[uint64]int64 // segment number -> bytes, for segments since snapSeq
	tallies  map[uint64]tally // segment number -> records written in this run
	snapRecs int64            // records in the snapshot (or loaded at Open)
	// perDelete is the bytes the last compaction reclaimed per delete
	// record it replaced (0: none measured yet): what compactDue expects a
	// delete to make garbage.
	perDelete float64
	snapSeq   uint64
	snapSize  int64

	compactMu  sync.Mutex // one compaction at a time
	compacting sync.WaitGroup
	compactOn  bool // guarded by smu

	// refused counts the batches failed by write errors since the last
	// write that succeeded, and refusedLog is when that was last logged;
	// both owned by the flusher.
	refused    int
	refusedLog time.Time

	batches, syncs atomic.Int64
}

// Stats counts what the log did since Open.
type Stats struct {
	Batches int64 // enqueued
	Syncs   int64 // fsyncs of a segment: Batches/Syncs is the group size
}

// Stats reports the counters.
func (l *Log) Stats() Stats { return Stats{Batches: l.batches.Load(), Syncs: l.syncs.Load()} }

// tally counts records, and the deletes among them: a delete makes the
// record it deletes garbage, which is what compaction reclaims.
type tally struct{ recs, dels int64 }

func (t *tally) add(o tally) { t.recs += o.recs; t.dels += o.dels }

type group struct {
	done chan struct{}
	err  error
	seq  uint64 // once written
}

func newGroup() *group { return &group{done: make(chan struct{})} }

// Wait implements persist.Pending.
func (g *group) Wait() error {
	<-g.done
	return g.err
}

// doneGroup is an already-settled Pending.
func doneGroup(err error) *group {
	if err == nil {
		return settled
	}
	g := newGroup()
	g.err = err
	close(g.done)
	return g
}

// settled is the Pending of every batch acknowledged at enqueue.
var settled = func() *group {
	g := newGroup()
	close(g.done)
	return g
}()

type rotated struct {
	seg uint64
	err error
}

var _ persist.Store = (*Log)(nil)

// Open locks dir (creating it if needed), recovers its state into load, and
// returns the log ready for appends. The Recovery says what was found,
// including a torn tail that was cut off (also sent to Options.Logf).
func Open(dir string, opts Options, load persist.Loader) (*Log, Recovery, error) {
	opts.defaults()
	var rec Recovery
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, rec, fmt.Errorf("oplog: data dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, rec, err // it names the dir and what to do
	}
	fail := func(err error) (*Log, Recovery, error) {
		lock.Close()
		return nil, rec, err
	}
	next, snapSeq, sizes, err := recoverDir(dir, &rec, load, opts.LoaderCopies)
	if err != nil {
		return fail(err)
	}
	if rec.Dropped != nil {
		opts.Logf("oplog: %s: %s", dir, rec.Dropped.describe())
	}
	l := &Log{
		dir: dir, opts: opts, lock: lock,
		group:   newGroup(),
		full:    make(chan struct{}, 1),
		spillC:  make(chan struct{}, 1),
		rotate:  make(chan chan rotated),
		syncReq: make(chan chan error),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		sizes:   sizes,
		snapSeq: snapSeq,
		tallies: map[uint64]tally{},
		// What was loaded stands in for the snapshot's records: the
		// segments read at Open are not tallied.
		snapRecs: int64(rec.Keys),
	}
	l.syncWake = sync.NewCond(&l.syncMu)
	l.synced = sync.NewCond(&l.syncMu)
	if rec.Snapshot != "" {
		if st, err := os.Stat(filepath.Join(dir, rec.Snapshot)); err == nil {
			l.snapSize = st.Size()
		}
	}
	// Every start writes to a fresh segment, so a segment is only ever
	// appended to by one process run.
	if err := l.startSegment(next); err != nil {
		return fail(fmt.Errorf("oplog: %w", err))
	}
	for range syncers {
		l.syncersWG.Add(1)
		go l.syncLoop()
	}
	go l.flushLoop()
	return l, rec, nil
}

func (d *Dropped) describe() string {
	return fmt.Sprintf("dropped a torn tail of %d bytes at byte %d of %s (%s): batches there were never acknowledged",
		d.Bytes, d.Offset, d.File, d.Reason)
}

// Dir is the data dir.
func (l *Log) Dir() string { return l.dir }

// Enqueue implements persist.Store.
func (l *Log) Enqueue(batch []persist.Record) persist.Pending {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return doneGroup(persist.ErrClosed)
	}
	if l.failed != nil {
		err := l.failed
		l.mu.Unlock()
		return doneGroup(err)
	}
	var err error
	l.buf, err = appendBatch(l.buf, batch)
	if err == nil {
		l.bufRecs.add(tallyOf(batch))
	}
	g := l.group
	spill := len(l.buf) >= spillAt
	l.mu.Unlock()
	if err != nil {
		return doneGroup(err)
	}
	l.batches.Add(1)
	if l.opts.Mode == Relaxed {
		if spill {
			select {
			case l.spillC <- struct{}{}:
			default:
			}
		}
		return settled // the ticker syncs it
	}
	l.syncMu.Lock()
	if !l.pending {
		l.pending = true
		l.syncWake.Signal()
	}
	l.syncMu.Unlock()
	return g
}

func tallyOf(batch []persist.Record) tally {
	t := tally{recs: int64(len(batch))}
	for _, r := range batch {
		if r.Op != persist.OpPut {
			t.dels++
		}
	}
	return t
}

// Commit implements persist.Store.
func (l *Log) Commit(batch []persist.Record) error { return l.Enqueue(batch).Wait() }

// Sync makes everything enqueued so far durable, in either mode.
func (l *Log) Sync() error {
	reply := make(chan error, 1)
	select {
	case l.syncReq <- reply:
		return <-reply
	case <-l.done:
		return persist.ErrClosed
	}
}

// Close implements persist.Store: it flushes and syncs what was enqueued,
// waits for a running compaction and releases the data dir.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return persist.ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	close(l.closing)
	<-l.done
	l.compacting.Wait()
	l.compactMu.Lock() // and for a Compact called by hand
	defer l.compactMu.Unlock()
	err := l.seg.Close()
	l.mu.Lock()
	if l.failed != nil && err == nil {
		err = l.failed
	}
	l.mu.Unlock()
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// flushLoop does what is not a flusher's: relaxed mode's ticks, Sync,
// rotations (for compaction, or when a flusher filled the segment) and
// the close.
func (l *Log) flushLoop() {
	defer close(l.done)
	defer func() {
		l.syncMu.Lock()
		l.syncStop = true
		l.syncWake.Broadcast()
		l.syncMu.Unlock()
		l.syncersWG.Wait()
	}()
	var tick <-chan time.Time
	if l.opts.Mode == Relaxed {
		t := time.NewTicker(l.opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			l.asWriter(func() { l.flush() })
		case <-l.spillC:
			l.asWriter(l.spill)
		case reply := <-l.syncReq:
			reply <- l.flushAndWait(nil)
		case reply := <-l.rotate:
			var err error
			l.flushAndWait(func() {
				if err = l.failure(); err == nil {
					err = l.startSegment(l.segNum + 1)
				}
			})
			reply <- rotated{seg: l.segNum, err: err}
		case <-l.full:
			l.flushAndWait(nil)
		case <-l.closing:
			l.flushAndWait(l.trimSegment)
			return
		}
	}
}

// asWriter runs write as the one writer, once no other goroutine writes.
func (l *Log) asWriter(write func()) {
	l.syncMu.Lock()
	for l.writing {
		l.synced.Wait()
	}
	l.writing, l.pending = true, false
	l.syncMu.Unlock()
	write()
	l.syncMu.Lock()
	l.writing = false
	l.syncWake.Broadcast() // what it wrote is there to sync
	l.synced.Broadcast()
	l.syncMu.Unlock()
}

// flushAndWait writes what is enqueued, waits until everything written is
// synced and then, still as the writer, runs then (if set) with the
// segment quiet: the answer is the first error of the write or a sync.
func (l *Log) flushAndWait(then func()) error {
	var err error
	l.asWriter(func() {
		err = l.flush()
		l.syncMu.Lock()
		l.syncWake.Broadcast() // the flushers sync what it wrote
		// Every sync must have ended too, not only one that covered all:
		// a slower one that began earlier may still open the segment,
		// which a rotation's compaction is about to delete.
		target := l.written
		for l.settled < target || l.syncing > 0 {
			l.synced.Wait()
		}
		l.syncMu.Unlock()
		if then != nil {
			then()
		} else {
			l.rotateIfFull()
		}
	})
	if err == nil {
		err = l.failure()
	}
	return err
}

// rotateIfFull starts the next segment if this one is full; called as the
// writer once everything written is synced.
func (l *Log) rotateIfFull() {
	if l.segSize >= l.opts.SegmentSize && l.failure() == nil {
		if err := l.startSegment(l.segNum + 1); err != nil {
			// The batches are durable in the old segment; the next full
			// segment retries.
			l.opts.Logf("oplog: %s: starting a new segment: %v", l.dir, err)
		}
	}
}

func (l *Log) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// spillAt is how much relaxed mode lets its buffer hold before writing it
// ahead of the tick (without a sync). Written every Interval instead, the
// buffer would be megabytes that have left the CPU's caches, and copying
// them into the page cache cost several times as much (a profile of 1 KiB
// SendMessageBatch: the kernel's copy at 9 % of fanout's CPU).
const spillAt = 256 << 10

// spill writes the frames enqueued so far, leaving their group open for
// the next flush, which syncs them; relaxed mode only, as the writer.
func (l *Log) spill() {
	l.mu.Lock()
	buf, recs := l.buf, l.bufRecs
	if len(buf) == 0 || l.failed != nil {
		l.mu.Unlock()
		return
	}
	l.buf, l.bufRecs, l.spilled = l.spare[:0], tally{}, true
	l.mu.Unlock()
	err := l.write(buf, recs)
	l.spare = buf
	if err != nil {
		l.fail(err) // acknowledged already: the log stops promising
	}
}

// flush writes the frames enqueued so far and queues their group for the
// syncer, or settles it at once if the write failed.
func (l *Log) flush() error {
	l.mu.Lock()
	buf, g := l.buf, l.group
	if (len(buf) == 0 && !l.spilled) || l.failed != nil {
		err := l.failed
		if err != nil && (len(buf) > 0 || l.spilled) {
			l.buf, l.group, l.bufRecs, l.spilled = buf[:0], newGroup(), tally{}, false
			g.err = err
			close(g.done)
		}
		l.mu.Unlock()
		return err
	}
	recs := l.bufRecs
	l.group, l.bufRecs, l.spilled = newGroup(), tally{}, false
	if len(buf) > 0 { // else a spill wrote it all: keep the empty buffer
		l.buf = l.spare[:0]
	}
	l.mu.Unlock()

	var err error
	if len(buf) > 0 {
		err = l.write(buf, recs)
		l.spare = buf
	}
	if err != nil {
		if l.opts.Mode == Relaxed {
			// These batches were acknowledged already: the log can no
			// longer keep its promise, so it stops making it.
			l.fail(err)
		}
		g.err = err
		close(g.done)
		return err
	}
	l.syncMu.Lock()
	l.written++
	g.seq = l.written
	l.unsynced = append(l.unsynced, g)
	l.syncSeg = l.segNum
	l.syncMu.Unlock()
	if l.segSize >= l.opts.SegmentSize {
		select { // the control loop starts the next once this one is synced
		case l.full <- struct{}{}:
		default:
		}
	}
	l.maybeCompact()
	return nil
}

// syncers is how many flushers there are, and so how many fdatasyncs may
// run at once. A disk takes a second
// one while the first runs, so a group written meanwhile need not wait for
// the first to end: with 8 writers on this project's machines two
// overlapping syncs acknowledged about a third more than one at a time.
const syncers = 2

// syncLoop is one flusher. When frames are enqueued and no one writes, it
// writes them; as soon as a written group is not covered by a sync already
// running, it syncs, then settles every group written before its sync
// began. So a batch's flusher usually writes and syncs it itself: one
// wake-up from the caller to the disk and one back. Each flusher syncs
// through a descriptor of its own, so a write-back error is reported to
// every sync it concerns, not only to the first to ask (Linux reports it
// once per open file).
func (l *Log) syncLoop() {
	defer l.syncersWG.Done()
	var (
		f      SegmentFile
		fSeg   uint64
		opened bool
	)
	defer func() {
		if opened {
			f.Close()
		}
	}()
	for {
		l.syncMu.Lock()
		var canWrite, canSync bool
		for {
			canWrite = l.pending && !l.writing
			canSync = l.written > l.started && l.syncing < syncers
			if canWrite || canSync || (l.syncStop && l.written == l.started) {
				break
			}
			l.syncWake.Wait()
		}
		if canWrite && !canSync {
			l.writing, l.pending = true, false
			l.syncMu.Unlock()
			l.flush()
			l.syncMu.Lock()
			l.writing = false
			if l.pending {
				l.syncWake.Signal() // enqueued meanwhile: another may write it
			}
			l.synced.Broadcast()
			l.syncMu.Unlock()
			continue // and sync what it wrote
		}
		if !canSync {
			l.syncMu.Unlock()
			return
		}
		cover, seg := l.written, l.syncSeg
		l.started = cover
		l.syncing++
		l.syncMu.Unlock()

		err := l.failure()
		if err == nil && (!opened || fSeg != seg) {
			if opened {
				f.Close()
				opened = false
			}
			var oerr error
			if f, oerr = l.opts.OpenSegment(filepath.Join(l.dir, segName(seg))); oerr != nil {
				err = fmt.Errorf("oplog: opening %s to sync it: %w", segName(seg), oerr)
				l.fail(err)
			} else {
				opened, fSeg = true, seg
			}
		}
		if err == nil {
			l.syncs.Add(1)
			if serr := f.Sync(); serr != nil {
				// The file's state is unknown now: refuse everything
				// after.
				err = fmt.Errorf("oplog: syncing %s: %w", l.dir, serr)
				l.fail(err)
			}
		}

		l.syncMu.Lock()
		l.syncing--
		n := 0
		for n < len(l.unsynced) && (err != nil || l.unsynced[n].seq <= cover) {
			g := l.unsynced[n]
			g.err = err
			close(g.done)
			n++
		}
		if n > 0 {
			l.settled = l.unsynced[n-1].seq
		}
		l.unsynced = l.unsynced[n:]
		l.synced.Broadcast()
		if l.written > l.started {
			l.syncWake.Signal() // written while it synced: a slot is free
		}
		l.syncMu.Unlock()
	}
}

// zeros fills preallocated space.
var zeros [64 << 10]byte

// writeZeros writes zeros over [from, to) of the segment.
func (l *Log) writeZeros(from, to int64) error {
	for off := from; off < to; {
		n := min(int64(len(zeros)), to-off)
		if _, err := l.seg.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// write puts buf at the end of the segment's data, preallocating ahead of
// it first. A failed write (a full disk) is wiped or cut back off so the
// segment stays whole and a later batch may succeed.
func (l *Log) write(buf []byte, recs tally) error {
	end := l.segSize + int64(len(buf))
	if end > l.alloc && l.opts.Prealloc > 0 && !l.noPrealloc {
		target := (end + l.opts.Prealloc - 1) / l.opts.Prealloc * l.opts.Prealloc
		if err := l.writeZeros(l.alloc, target); err != nil {
			// No room to run ahead (a small or full disk): give back
			// what part of it took and write this segment's data only.
			l.seg.Truncate(l.alloc)
			l.noPrealloc = true
		} else {
			l.alloc = target
		}
	}
	l.reserveAhead(end)
	if _, err := l.seg.WriteAt(buf, l.segSize); err != nil {
		if l.alloc > l.segSize {
			err2 := l.writeZeros(l.segSize, min(end, l.alloc))
			if err2 == nil && end > l.alloc {
				err2 = l.seg.Truncate(l.alloc)
			}
			if err2 != nil {
				l.alloc = l.segSize
				err2 = l.seg.Truncate(l.segSize)
			}
			if err2 != nil {
				l.fail(fmt.Errorf("oplog: write failed (%v) and wiping it failed: %w", err, err2))
			}
		} else if terr := l.seg.Truncate(l.segSize); terr != nil {
			l.fail(fmt.Errorf("oplog: write failed (%v) and cutting it back failed: %w", err, terr))
		}
		l.reserved = l.segSize // the truncate gave the reserved blocks back
		return l.refusedWrite(err)
	}
	if l.refused > 0 {
		l.opts.Logf("oplog: %s: writes succeed again; the calls of %d batches were refused meanwhile", l.dir, l.refused)
		l.refused = 0
	}
	l.segSize = end
	l.alloc = max(l.alloc, end)
	l.smu.Lock()
	l.sizes[l.segNum] = l.segSize
	t := l.tallies[l.segNum]
	t.add(recs)
	l.tallies[l.segNum] = t
	l.smu.Unlock()
	return nil
}

// reserveAhead, in relaxed mode, reserves the segment's blocks to the
// reserveStep boundary past end, where its file can (reserver) and before
// a write reaches them. A segment whose reserving failed (a full disk, a
// file system without it) is appended to as before.
func (l *Log) reserveAhead(end int64) {
	if l.opts.Mode != Relaxed || end <= l.reserved || l.noReserve {
		return
	}
	r, ok := l.seg.(reserver)
	if !ok {
		return
	}
	from := max(l.reserved, l.segSize)
	target := (end + reserveStep - 1) / reserveStep * reserveStep
	if err := r.Reserve(from, target-from); err != nil {
		l.noReserve = true
		return
	}
	l.reserved = target
}

// reserver is a segment file that can allocate blocks past its end
// without changing its size.
type reserver interface{ Reserve(off, n int64) error }

// reserveStep is how far ahead relaxed mode reserves a segment's blocks:
// one fallocate per 4 MiB written.
const reserveStep = 4 << 20

// trimSegment cuts the current segment's preallocated zeros off, so a
// closed or finished segment holds its data only; a truncate to its size
// also gives back the blocks reserved past it.
func (l *Log) trimSegment() {
	if l.seg != nil && max(l.alloc, l.reserved) > l.segSize {
		if l.seg.Truncate(l.segSize) == nil {
			l.alloc, l.reserved = l.segSize, l.segSize
		}
	}
}

// refusedWrite logs a write the disk refused (full, read-only): the first
// at once, then one line every refusedEvery while it goes on. It returns
// the error the group gets.
func (l *Log) refusedWrite(err error) error {
	err = fmt.Errorf("oplog: writing to %s: %w", l.dir, err)
	l.refused++
	if l.refused == 1 {
		l.opts.Logf("%v: the calls waiting on it, and later writes until the disk takes them again, answer 500 (nothing unstored is acknowledged); reads keep working", err)
		l.refusedLog = time.Now()
	} else if time.Since(l.refusedLog) >= refusedEvery {
		l.opts.Logf("%v: still refusing writes (%d batches so far)", err, l.refused)
		l.refusedLog = time.Now()
	}
	return err
}

// refusedEvery paces the log lines of a disk that keeps refusing writes.
const refusedEvery = 10 * time.Second

func (l *Log) fail(err error) {
	l.opts.Logf("%v; refusing every later write", err)
	l.mu.Lock()
	if l.failed == nil {
		l.failed = err
	}
	l.mu.Unlock()
}

// startSegment creates segment n (header synced, dir entry synced) and
// makes it current.
func (l *Log) startSegment(n uint64) error {
	path := filepath.Join(l.dir, segName(n))
	if err := writeFileSync(path, header(logMagic)); err != nil {
		return err
	}
	f, err := l.opts.OpenSegment(path)
	if err != nil {
		return err
	}
	if l.seg != nil {
		l.trimSegment()
		l.seg.Close()
	}
	l.seg, l.segNum, l.segSize, l.alloc, l.noPrealloc = f, n, headerSize, headerSize, false
	l.reserved, l.noReserve = headerSize, false
	l.smu.Lock()
	l.sizes[n] = headerSize
	l.smu.Unlock()
	return nil
}

// writeFileSync creates path with data through a temporary name, so the
// name only ever points at complete, synced content.
func writeFileSync(path string, data []byte) error {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Size is the bytes of the snapshot and segments the log holds now.
func (l *Log) Size() int64 {
	l.smu.Lock()
	defer l.smu.Unlock()
	total := l.snapSize
	for _, s := range l.sizes {
		total += s
	}
	return total
}

var errCompactClosed = errors.New("oplog: closed during compaction")
