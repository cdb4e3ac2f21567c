package sqs

import (
	"hash/maphash"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fanout/fanout/awserr"
)

// dumpPage is how many messages one Change of a Dump holds, and
// dumpPageBytes about how many of their bytes: the queue's lock is
// released between pages. A page of DumpViews, encoded under the lock
// (about half again what copying a small message out costs), holds fewer
// small messages (viewPage), so that it holds the lock no longer.
const (
	dumpPage      = 512
	viewPage      = 384
	dumpPageBytes = 1 << 20
)

// Dump hands the engine's durable state to emit: for each queue a Change
// with its state, deduplication ids and receive attempts, then its messages
// in Changes of up to dumpPage (each with its current Status); then the
// names deleted recently and the move tasks. A store's compaction
// (persist.Snapshotter) writes them as its new base. Each part is read
// under its lock, and emit is called after releasing it. Messages are read
// slot by slot across several holds of the queue's lock (compaction of the
// slots waits meanwhile): one sent or changed after the Dump began may be
// missed or seen, which the store's replay of what was enqueued since
// settles (values are whole).
func (e *Engine) Dump(emit func(Change) error) error {
	var pending Change
	return e.dump(&dumper{
		encode: func(c Change) error { pending = c; return nil },
		flush: func() error {
			c := pending
			pending = Change{}
			return emit(c)
		},
	})
}

// DumpViews is Dump for a caller that encodes what it is handed into
// memory of its own: the same Changes in the same order go to encode, and
// after each, with no lock held, flush is called (to write what encode
// made). A Change of messages goes to encode under its queue's lock, its
// MessageRecords' ids, MD5s and bodies viewing the queue's memory, valid
// during the call only; encode must copy what it keeps and do nothing
// else (no I/O, no call into the engine), for the queue waits for it.
// Nothing of a message is copied but by encode.
func (e *Engine) DumpViews(encode func(Change) error, flush func() error) error {
	return e.dump(&dumper{views: true, encode: encode, flush: flush})
}

// dumper walks an engine for Dump and DumpViews.
type dumper struct {
	views  bool // messages' strings view the queues' memory
	encode func(Change) error
	flush  func() error
	page   []MessageRecord // reused when views, since encode copies
	text   []byte          // the page's ids as text, reused with it
}

// emit hands c to encode and flush, with no lock held.
func (d *dumper) emit(c Change) error {
	if err := d.encode(c); err != nil {
		return err
	}
	return d.flush()
}

func (e *Engine) dump(d *dumper) error {
	registryLocking()
	e.mu.RLock()
	queues := make([]*Queue, 0, len(e.queues))
	for _, q := range e.queues {
		queues = append(queues, q)
	}
	var names []DeletedName
	for n, at := range e.deleted {
		names = append(names, DeletedName{n, at})
	}
	e.mu.RUnlock()
	sort.Slice(queues, func(i, j int) bool { return queues[i].name < queues[j].name })
	for _, q := range queues {
		if err := d.queue(q); err != nil {
			return err
		}
	}
	if len(names) > 0 {
		sort.Slice(names, func(i, j int) bool { return names[i].Name < names[j].Name })
		if err := d.emit(Change{DeletedNames: names}); err != nil {
			return err
		}
	}
	if e.moves == nil {
		return nil
	}
	var tasks []MoveTaskState
	e.moves.mu.Lock()
	for _, t := range e.moves.byHandle {
		t.mu.Lock()
		tasks = append(tasks, t.state())
		t.mu.Unlock()
	}
	e.moves.mu.Unlock()
	if len(tasks) == 0 {
		return nil
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Handle < tasks[j].Handle })
	return d.emit(Change{MoveTasks: tasks})
}

// queue hands q's state to emit, then its messages page by page to encode
// under q's lock and to flush after it.
func (d *dumper) queue(q *Queue) error {
	q.lock()
	if q.deleted {
		q.unlock()
		return nil
	}
	c := Change{Queues: []QueueState{q.state()}}
	now := q.engine.clock.Now()
	if f := q.fifo; f != nil {
		for _, k := range f.dedupLog {
			if de, ok := f.dedup[k.key]; ok && de.at.Equal(k.at) && now.Sub(de.at) < dedupWindow {
				c.Dedup = append(c.Dedup, q.dedupState(k.key, de))
			}
		}
		for id, a := range f.attempts {
			if now.Sub(a.at) < dedupWindow {
				c.Attempts = append(c.Attempts, q.attemptState(id, a))
			}
		}
		sort.Slice(c.Attempts, func(i, j int) bool { return c.Attempts[i].ID < c.Attempts[j].ID })
	}
	q.dumping++
	q.unlock()
	defer func() {
		q.lock()
		q.dumping--
		q.unlock()
	}()
	if err := d.emit(c); err != nil {
		return err
	}
	for from := uint32(0); ; {
		q.lock()
		if q.deleted {
			q.unlock()
			return nil
		}
		next, n, err := d.messages(q, from)
		done := next >= q.msgs.slab.n
		q.unlock()
		if err != nil {
			return err
		}
		if n > 0 {
			if err := d.flush(); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		from = next
	}
}

// messages hands encode the next page of q's messages, from slot from on:
// how many, and the slot after the last. Callers hold q.mu.
func (d *dumper) messages(q *Queue, from uint32) (next uint32, n int, err error) {
	most := dumpPage
	if d.views {
		most = viewPage
	}
	page := d.page[:0]
	if !d.views || page == nil {
		page = make([]MessageRecord, 0, most)
	}
	bytes := 0
	i := from
	for ; i < q.msgs.slab.n && len(page) < most && bytes < dumpPageBytes; i++ {
		r := q.rec(i)
		if r.state == stateGone {
			continue
		}
		bytes += int(r.size() + r.bodyLen - r.inlineBody())
		if d.views {
			if d.text == nil {
				d.text = make([]byte, viewPage*hexIDs)
			}
			k := len(page) * hexIDs
			page = append(page, q.messageView(i, d.text[k:k+hexIDs]))
		} else {
			page = append(page, q.message(i))
		}
	}
	if len(page) == 0 {
		return i, 0, nil
	}
	err = d.encode(Change{Messages: page})
	if d.views {
		clear(page) // no view outlives the lock
		d.page = page
	}
	return i, len(page), err
}

// Restore loads a State into an engine that has no queues yet: a Restorer
// fed with all of it.
func (e *Engine) Restore(st State) error { return e.restoreWith(NewRestorer(), st) }

func (e *Engine) restoreWith(r *Restorer, st State) error {
	for _, q := range st.Queues {
		r.Queue(q)
	}
	for _, m := range st.Messages {
		if err := r.Message(m); err != nil {
			return err
		}
	}
	for _, s := range st.Statuses {
		r.Status(s)
	}
	for _, d := range st.Dedup {
		r.Dedup(d)
	}
	for _, a := range st.Attempts {
		r.Attempt(a)
	}
	for _, n := range st.DeletedNames {
		r.DeletedName(n)
	}
	for _, t := range st.MoveTasks {
		r.MoveTask(t)
	}
	return r.Into(e)
}

// Restorer gathers recovered state, in any order (a store hands keys back
// roughly oldest write first, not queue by queue), for an engine with no
// queues: messages are stored into their queue's memory as they come, so
// that nothing is held twice, and put in order by Into. A Status for a
// message replaces the one it came with; anything of a queue that has no
// QueueState by then is dropped. It may be filled before the engine exists.
type Restorer struct {
	queues   map[string]*restoring
	names    []DeletedName
	tasks    []MoveTaskState
	finished bool
	// chunksAhead and pagesAhead map the big queues' next chunks and
	// record pages on another goroutine (regionsAhead); nil until a queue
	// grows to them.
	chunksAhead, pagesAhead *regionsAhead
	// last is the queue of the latest message, named lastName.
	last     *restoring
	lastName string
	// shareSender, when set, is the sender whose bodies are stored once for
	// every queue that holds the same bytes (ShareBodiesOf); shared finds
	// them by hash, each with a reference of the Restorer's own.
	shareSender string
	seed        maphash.Seed
	shared      map[uint64]sharedEntry
}

type sharedEntry struct{ ref, n uint32 }

// ShareBodiesOf has the Restorer store the bodies of sender's messages once
// for every queue that holds the same bytes: fanout's SNS, whose raw
// deliveries share one body among the queues of a publish (SharedBody),
// while a store keeps a copy per queue. Bodies too short to share and
// other senders' messages are copied as always.
func (r *Restorer) ShareBodiesOf(sender string) { r.shareSender = sender }

// sharedRef returns the ref of the one copy of body, stored at its first
// sight, or 0 when it is not to be shared.
func (r *Restorer) sharedRef(body string) uint32 {
	if len(body) < minShared {
		return 0
	}
	if r.shared == nil {
		r.shared, r.seed = map[uint64]sharedEntry{}, maphash.MakeSeed()
	}
	h := maphash.String(r.seed, body)
	if e, ok := r.shared[h]; ok {
		if int(e.n) == len(body) && string(sharedBodies.body(e.ref, e.n)) == body {
			return e.ref
		}
		return 0 // another body of that hash: copied
	}
	ref := sharedBodies.put(body)
	if ref != 0 {
		r.shared[h] = sharedEntry{ref, uint32(len(body))}
	}
	return ref
}

// dropShared drops the Restorer's references: the queues hold their own.
func (r *Restorer) dropShared() {
	for _, e := range r.shared {
		sharedBodies.drop(e.ref, e.n)
	}
	r.shared = nil
}

type restoring struct {
	msgs   *store
	groups groupTable
	st     *QueueState
	// Messages come mostly in seq order (a snapshot writes them so, a log
	// in send order): while they do, slot i holds the i-th and a seq is
	// found by binary search; bySeq is built at the first out of order.
	bySeq    map[uint64]uint32
	maxSeq   uint64
	statuses []MessageStatus // for messages not (yet) seen
	dedup    []DedupState
	attempts []AttemptState
	lastSeq  uint64 // of the latest message stored, whose slot is lastSlot
	lastSlot uint32
}

// NewRestorer returns an empty Restorer.
func NewRestorer() *Restorer { return &Restorer{queues: map[string]*restoring{}} }

func (r *Restorer) queue(name string) *restoring {
	if r.last != nil && r.lastName == name {
		return r.last // most keys are of the queue of the key before
	}
	q := r.queues[name]
	name = strings.Clone(name) // name may be a view of a store's key
	if q == nil {
		q = &restoring{msgs: &store{}}
		r.queues[name] = q
	}
	r.last, r.lastName = q, name
	return q
}

// Discard frees what the Restorer holds, when it is not used.
func (r *Restorer) Discard() {
	for _, q := range r.queues {
		if q.msgs != nil {
			q.msgs.release()
		}
	}
	r.queues, r.finished, r.last = nil, true, nil
	r.stopAhead()
	r.dropShared()
}

// stopAhead ends the mapping ahead and frees what it mapped unused.
func (r *Restorer) stopAhead() {
	for _, a := range []*regionsAhead{r.chunksAhead, r.pagesAhead} {
		if a != nil {
			a.stop()
		}
	}
}

// bigPage is the size of a full page of records (slab.go), the one a
// growing queue adds again and again.
const bigPage = pageRecs * recordSize

// roomFor gives s, before a message of about n bytes is stored into it, the
// chunk and record page it is about to map, when they are the big ones
// that a large queue maps over and over: those come mapped ahead.
func (r *Restorer) roomFor(s *store, n int) {
	if s.chunks.regionFor(n, n) == maxChunk {
		if r.chunksAhead == nil {
			r.chunksAhead = newRegionsAhead(maxChunk)
		}
		s.chunks.stage(r.chunksAhead.take())
	}
	if s.slab.free != 0 {
		return // alloc reuses a slot
	}
	if p, _ := locate(s.slab.n); int(p) == s.slab.pageCount() && pageLen(int(p))*recordSize == bigPage {
		if r.pagesAhead == nil {
			r.pagesAhead = newRegionsAhead(bigPage)
		}
		// The page alloc would add, zeroed as its own would be.
		s.slab.addPage(r.pagesAhead.take())
	}
}

// Queue restores a queue's state.
func (r *Restorer) Queue(st QueueState) {
	r.queue(st.Name).st = &st
}

// Message stores a message into its queue's memory.
func (r *Restorer) Message(m MessageRecord) error {
	var ids [bodyAt]byte
	if !parseIDs(&ids, m.MessageID, m.MD5OfBody) {
		return restoreError("message %d of queue %s has a malformed id or MD5", m.Seq, m.Queue)
	}
	rq := r.queue(m.Queue)
	s := rq.msgs
	if m.Seq <= rq.maxSeq {
		rq.index()
		if i, ok := rq.bySeq[m.Seq]; ok { // stored twice: the later wins
			if g := rq.groups.of(s.at(i)); g != nil {
				g.size--
			}
			s.forget(s.at(i))
			s.slab.release(i)
			delete(rq.bySeq, m.Seq)
		}
	}
	d := draft{ids: ids, body: m.Body, sender: m.SenderID,
		ext: messageExt{traceHeader: m.AWSTraceHeader, dedupID: m.DeduplicationID, sequenceNum: m.SequenceNumber, dlqSource: m.DeadLetterSourceArn}}
	if r.shareSender != "" && m.SenderID == r.shareSender {
		d.shared = r.sharedRef(m.Body)
	}
	if len(m.Attributes) > 0 {
		md5 := m.MD5OfMessageAttributes
		if len(md5) != 32 {
			md5 = MD5OfAttributes(m.Attributes)
		}
		d.attrs = encodeAttrs(m.Attributes, md5)
	}
	r.roomFor(s, d.storedSize()+len(m.SenderID))
	i := s.slab.alloc()
	rec := s.at(i)
	rec.seq, rec.sentAt, rec.index = m.Seq, m.SentAt, -1
	s.put(rec, &d)
	if m.GroupID != "" {
		g := rq.groups.get(m.GroupID, &s.slab)
		g.size++
		rec.group = g.idx
	}
	setStatus(rec, m.Status)
	if rq.bySeq != nil {
		rq.bySeq[m.Seq] = i
	}
	rq.maxSeq = max(rq.maxSeq, m.Seq)
	rq.lastSeq, rq.lastSlot = m.Seq, i
	return nil
}

// setStatus sets the mutable fields of r; its state waits for Finish.
func setStatus(r *record, s MessageStatus) {
	r.visibleAt, r.receivedAt, r.firstReceiveAt = s.VisibleAt, s.ReceivedAt, s.FirstReceiveAt
	r.receiveCount, r.receivesBefore = s.ReceiveCount, s.ReceivesBefore
	if r.gen() != s.HandleGen && int64(s.HandleGen) <= int64(s.ReceiveCount) {
		// HandleGen counts the receives from this queue, as gen does: keep
		// the handles given out before the restart valid.
		r.receivesBefore = s.ReceiveCount - int32(s.HandleGen)
	}
	r.setOrder(s.Order) // 0, as older records have it: its seq
	switch s.State {
	case MessageInflight:
		r.state = stateInflight
	case MessageDelayed:
		r.state = stateDelayed
	default:
		r.state = stateReturned
	}
}

// index builds bySeq, once messages come out of seq order.
func (rq *restoring) index() {
	if rq.bySeq != nil {
		return
	}
	rq.bySeq = make(map[uint64]uint32, rq.msgs.slab.n)
	for i := range rq.msgs.slab.n {
		if r := rq.msgs.at(i); r.state != stateGone {
			rq.bySeq[r.seq] = i
		}
	}
}

// find returns the slot of the message seq.
func (rq *restoring) find(seq uint64) (uint32, bool) {
	if rq.bySeq != nil {
		i, ok := rq.bySeq[seq]
		return i, ok
	}
	s := rq.msgs
	i := uint32(sort.Search(int(s.slab.n), func(k int) bool { return s.at(uint32(k)).seq >= seq }))
	return i, i < s.slab.n && s.at(i).seq == seq
}

// Status restores a message's latest status.
func (r *Restorer) Status(s MessageStatus) {
	rq := r.queue(s.Queue)
	i, ok := rq.lastSlot, rq.lastSeq == s.Seq && rq.lastSeq != 0
	if !ok {
		i, ok = rq.find(s.Seq)
	}
	if !ok {
		s.Queue = "" // rq is its queue; the name may view a store's buffer, kept by nothing
		rq.statuses = append(rq.statuses, s)
		return
	}
	setStatus(rq.msgs.at(i), s)
}

// Dedup restores a FIFO queue's deduplication id.
func (r *Restorer) Dedup(d DedupState) {
	rq := r.queue(d.Queue)
	d.Queue = "" // as in Status
	rq.dedup = append(rq.dedup, d)
}

// Attempt restores a replayable receive.
func (r *Restorer) Attempt(a AttemptState) {
	rq := r.queue(a.Queue)
	rq.attempts = append(rq.attempts, a)
}

// DeletedName restores a name deleted recently.
func (r *Restorer) DeletedName(n DeletedName) { r.names = append(r.names, n) }

// MoveTask restores a move task; a running one resumes at Finish.
func (r *Restorer) MoveTask(t MoveTaskState) { r.tasks = append(r.tasks, t) }

func restoreError(format string, args ...any) error {
	return ErrInternal.New("restoring: "+format, args...)
}

// ErrInternal is a failure of fanout, not of the call: a state it cannot
// restore, or a change its store cannot keep (500, InternalFailure).
var ErrInternal = awserr.Internal

// Into loads what r gathered into e, which must have no queues: every
// message is put where e's clock says it is, what expired meanwhile
// (retention, deduplication windows, attempts, deleted names) is dropped,
// and running move tasks resume. The Restorer cannot be used afterwards.
func (r *Restorer) Into(e *Engine) error {
	if r.finished {
		return restoreError("Restorer used twice")
	}
	r.finished = true
	r.stopAhead() // every message is stored
	defer r.dropShared()
	now := e.clock.Now()
	registryLocking()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queues) > 0 {
		return restoreError("the engine has queues already")
	}
	names := slices.Sorted(maps.Keys(r.queues))
	for _, name := range names {
		rq := r.queues[name]
		if rq.st == nil {
			rq.msgs.release() // messages of a queue that is gone
			rq.msgs = nil
			continue
		}
		q, err := rq.finish(e, now)
		if err != nil {
			return err // its messages are Discard's to free
		}
		rq.msgs = nil // the queue's now
		e.queues[name] = q
	}
	for _, n := range r.names {
		if _, live := e.queues[n.Name]; !live && now.Sub(n.At) < 60*time.Second {
			e.deleted[n.Name] = n.At
		}
	}
	r.restoreTasks(e)
	return nil
}

// finish builds the queue. No other goroutine sees it yet.
func (rq *restoring) finish(e *Engine, now time.Time) (*Queue, error) {
	st := rq.st
	cfg := defaultConfig(st.Fifo)
	for _, n := range sortedKeys(st.Attributes) {
		if err := cfg.set(n, st.Attributes[n], true); err != nil {
			return nil, restoreError("queue %s: attribute %s: %s", st.Name, n, err.Message)
		}
	}
	q := newQueueOf(e, st.Name, st.Fifo, st.Created, rq.msgs) // the messages stored so far, with their groups
	q.config = cfg
	q.groups = rq.groups
	q.uid, q.created, q.modified, q.lastPurge = st.UID, st.Created, st.Modified, st.LastPurge
	if len(st.Tags) > 0 {
		q.tags = maps.Clone(st.Tags)
	}
	q.deadLettered.Store(st.DeadLetteredCounter)
	for _, s := range rq.statuses {
		if i, ok := rq.find(s.Seq); ok {
			setStatus(q.rec(i), s)
		}
	}
	rq.bySeq, rq.statuses = nil, nil
	q.seq, q.seqCeil = st.SeqCeiling, st.SeqCeiling
	if q.fifo != nil {
		q.fifo.sequence, q.fifo.sequenceCeil = st.SequenceCeiling, st.SequenceCeiling
	}
	// Place every message: in flight and delayed ones by their time, the
	// visible ones in their order.
	n := now.UnixNano()
	var visible []uint32
	for i := range q.msgs.slab.n {
		r := q.rec(i)
		if r.state == stateGone {
			continue
		}
		q.seq = max(q.seq, r.order())
		if q.fifo != nil && r.extLen > 0 {
			ext, _ := q.msgs.ext(r)
			q.fifo.sequence = max(q.fifo.sequence, sequenceCounter(ext.sequenceNum))
		}
		if q.retentionExpired(r, now) {
			q.drop(i)
			continue
		}
		if r.receiveCount > 0 {
			q.handle(r.seq, i)
		}
		switch {
		case r.state == stateInflight && r.visibleAt > n:
			q.enterInflight(i)
		case r.state == stateDelayed && r.visibleAt > n:
			q.delayed.push(i)
		default:
			visible = append(visible, i)
		}
	}
	// An in-flight message whose timeout ended meanwhile goes to the back
	// as promote would have sent it (a standard queue's third receive).
	for _, i := range visible {
		r := q.rec(i)
		if rp := q.config.redrive; r.state == stateInflight && q.fifo == nil && rp != nil && rp.MaxReceiveCount > 3 && r.receiveCount == 3 {
			q.seq++
			r.setOrder(q.seq)
		}
	}
	slices.SortFunc(visible, func(a, b uint32) int {
		ra, rb := q.rec(a), q.rec(b)
		switch {
		case ra.order() < rb.order():
			return -1
		case ra.order() > rb.order():
			return 1
		}
		return 0
	})
	for _, i := range visible {
		r := q.rec(i)
		switch {
		case q.fifo != nil:
			q.fifoPush(i)
		case r.receiveCount == 0 && r.sentAt == r.visibleAt:
			r.state = stateReady
			q.ready.push(i)
		default:
			r.state = stateReturned
			q.returned.push(i)
		}
	}
	if q.fifo != nil {
		rq.restoreFifo(q, now)
	}
	return q, nil
}

// sequenceCounter is the counter behind a SequenceNumber nextSequence made.
func sequenceCounter(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n < sequenceBase {
		return 0
	}
	return (n - sequenceBase) / sequenceStep
}

func (rq *restoring) restoreFifo(q *Queue, now time.Time) {
	f := q.fifo
	sort.SliceStable(rq.dedup, func(i, j int) bool { return rq.dedup[i].At.Before(rq.dedup[j].At) })
	for _, d := range rq.dedup {
		f.sequence = max(f.sequence, sequenceCounter(d.SequenceNumber))
		if now.Sub(d.At) < dedupWindow {
			f.remember(d.Key, dedupEntry{d.MessageID, d.SequenceNumber, d.At})
		}
	}
	for _, a := range rq.attempts {
		if now.Sub(a.At) >= dedupWindow || len(a.Seqs) != len(a.Gens) {
			continue
		}
		req := receiveReq{attemptID: a.ID, attrNames: a.MessageAttributeNames}
		for _, n := range a.AttributeNames {
			if n == "All" {
				req.sysAll = true
				continue
			}
			if req.sys == nil {
				req.sys = map[string]bool{}
			}
			req.sys[n] = true
		}
		at := &attempt{at: a.At, seqs: a.Seqs, gens: a.Gens, req: req}
		ok := true
		for k, seq := range a.Seqs {
			i, found := q.handles[seq]
			if !found || q.rec(i).state != stateInflight || q.rec(i).gen() != a.Gens[k] {
				ok = false
				break
			}
			at.msgs = append(at.msgs, i)
			at.out = append(at.out, q.render(i, req))
		}
		if ok {
			f.attempts[a.ID] = at
		}
	}
}

// restoreTasks restores the move tasks; running ones tick again a second
// from now, and resume moving.
func (r *Restorer) restoreTasks(e *Engine) {
	if len(r.tasks) == 0 {
		return
	}
	ts := e.tasks()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	sort.SliceStable(r.tasks, func(i, j int) bool { return r.tasks[i].Task.Started.Before(r.tasks[j].Task.Started) })
	for _, st := range r.tasks {
		t := &moveTask{handle: st.Handle, info: st.Task}
		src := t.info.SourceArn
		ts.bySource[src] = append([]*moveTask{t}, ts.bySource[src]...)
		ts.byHandle[t.handle] = t
		if t.info.Status == TaskRunning {
			t.mu.Lock()
			t.timer = e.clock.AfterFunc(time.Second, func() { e.moveTick(t) })
			t.mu.Unlock()
		}
	}
}
