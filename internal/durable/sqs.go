package durable

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/sqs"
)

// SQS keys and values. A message is two keys, so that a receive, which
// changes a few numbers, does not write its body again:
//
//	sqs/<account>/<region>/queue/<name>            sqs.QueueState (JSON)
//	sqs/<account>/<region>/queue/<name>/m/<seq>    sqs.MessageRecord: what never changes and its status when written (binary)
//	sqs/<account>/<region>/queue/<name>/s/<seq>    sqs.MessageStatus written since (binary)
//	sqs/<account>/<region>/queue/<name>/d/<key>    sqs.DedupState (binary; <key> may hold any byte)
//	sqs/<account>/<region>/queue/<name>/a/<id>     sqs.AttemptState (JSON)
//	sqs/<account>/<region>/deleted/<name>          sqs.DeletedName (JSON)
//	sqs/<account>/<region>/movetask/<handle>       sqs.MoveTaskState (JSON)
//
// <seq> is 16 hex digits, so that a queue's messages sort in send order.
// A status (s) key is only written after its message (m) key, in the same
// batch or a later one, so recovery, which hands keys back in the order of
// their last write, sees a message before the status that replaces its own.
// A snapshot writes each message's m key with its current status and no s
// key. A deleted queue is a Delete of its key and a DeletePrefix of its key
// and "/" (names hold no "/"); a purge is a DeletePrefix of its m/, s/ and
// a/ keys (its deduplication ids stay, as on AWS).
//
// Messages, statuses and deduplication ids, written once or more per
// message, are binary: the format byte (1), then unsigned varints (u),
// signed varints (i) and length-prefixed strings (s: a u, then the bytes):
//
//	status:  u Order, 1 byte State (0 visible, 1 in flight, 2 delayed),
//	         i VisibleAt, i ReceivedAt, i FirstReceiveAt,
//	         u ReceiveCount, u ReceivesBefore, u HandleGen
//	message: MessageId (36 bytes), MD5OfBody (32 bytes), i SentAt, status,
//	         s SenderID, s AWSTraceHeader, s GroupID, s DeduplicationID,
//	         s SequenceNumber, s DeadLetterSourceArn, s MD5OfMessageAttributes,
//	         u attribute count, then per attribute s Name, s DataType,
//	         s StringValue, s BinaryValue; the body is the rest of the value
//	dedup:   s MessageID, s SequenceNumber, i At (Unix nanoseconds)
//
// JSON per message would cost several times the bytes and the time (the
// queue's state and the rare records are JSON, as SNS's are). Fields are
// only ever appended to these layouts with a new format byte, never
// reordered; the golden test in format_test.go pins them.

func sqsPrefix(ns Namespace) string { return "sqs/" + ns.Account + "/" + ns.Region + "/" }

// SQSJournal is the sqs.Journal of the engine of ns, writing to st.
func SQSJournal(st persist.Store, ns Namespace) sqs.Journal {
	return sqsJournal{storeJournal{st: st, prefix: sqsPrefix(ns)}}
}

type sqsJournal struct{ storeJournal }

// Record implements sqs.Journal: the Change is one batch.
func (j sqsJournal) Record(c sqs.Change) sqs.Waiter {
	e := getEncoded()
	defer e.release() // the store copied the batch before Enqueue returned
	recs, err := e.sqsRecords(j.prefix, c)
	return j.enqueue(recs, err)
}

// encoded holds the records of one Change, with the keys and values of its
// messages, statuses and removals in one buffer: a message costs no
// allocation of its own. Both are pooled, since a store copies a batch
// before its Enqueue returns (persist.Record).
type encoded struct {
	recs []persist.Record
	buf  []byte
}

var encodedPool = sync.Pool{New: func() any { return new(encoded) }}

func getEncoded() *encoded { return encodedPool.Get().(*encoded) }

// release gives e back, unless a big batch (a SendMessageBatch of 256 KiB
// messages) made it too big to keep idle.
func (e *encoded) release() {
	if cap(e.buf) > 1<<20 || cap(e.recs) > 1024 {
		return
	}
	e.clearForPool()
	encodedPool.Put(e)
}

func (e *encoded) clearForPool() {
	// No stale slices kept alive in the pool. Those past len are clear
	// already (sqsRecords clears what a shorter use leaves of a longer
	// one), so clearing what the last use wrote suffices: clearing to cap
	// cost every call 28 KB of memclr once a snapshot's page of 512
	// messages had used e.
	clear(e.recs)
	e.recs, e.buf = e.recs[:0], e.buf[:0]
}

// take returns what was appended to e.buf since start, as a slice that
// later appends cannot overwrite: were the buffer to grow, earlier slices
// keep the array they point into.
func (e *encoded) take(start int) []byte { return e.buf[start:len(e.buf):len(e.buf)] }

func queueKey(prefix, name string) string { return prefix + "queue/" + name }

func seqKeyLen(prefix, queue string) int { return len(prefix) + len(queue) + 6 + 3 + 16 }

func appendSeqKey(k []byte, prefix, queue, kind string, seq uint64) []byte {
	k = append(k, prefix...)
	k = append(k, "queue/"...)
	k = append(k, queue...)
	k = append(k, '/')
	k = append(k, kind...)
	k = append(k, '/')
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	return hex.AppendEncode(k, b[:])
}

// sqsRecords encodes c, deletions first (as sqs.Change says), into slices
// of its own.
func sqsRecords(prefix string, c sqs.Change) ([]persist.Record, error) {
	return new(encoded).sqsRecords(prefix, c)
}

// sqsRecords encodes c into e: the records are valid until e is released.
func (e *encoded) sqsRecords(prefix string, c sqs.Change) ([]persist.Record, error) {
	n := len(c.Messages) + len(c.Statuses) + len(c.Dedup) + len(c.Queues) + 2*len(c.Removed)
	prev := e.recs
	recs := prev[:0]
	if cap(recs) < n {
		recs = make([]persist.Record, 0, n)
	}
	defer func() {
		if cap(recs) == cap(prev) && len(recs) < len(prev) {
			clear(prev[len(recs):]) // what an earlier, longer use left (see release)
		}
		e.recs = recs
	}()
	// Room for what goes into e.buf, so that it is not regrown midway.
	room := 0
	for i := range c.Messages {
		room += seqKeyLen(prefix, c.Messages[i].Queue) + messageLen(&c.Messages[i])
	}
	for i := range c.Statuses {
		room += seqKeyLen(prefix, c.Statuses[i].Queue) + statusLen
	}
	for i := range c.Removed {
		room += 2 * seqKeyLen(prefix, c.Removed[i].Queue)
	}
	if e.buf = e.buf[:0]; cap(e.buf) < room {
		e.buf = make([]byte, 0, room)
	}
	key := func(queue, kind string, seq uint64) []byte {
		start := len(e.buf)
		e.buf = appendSeqKey(e.buf, prefix, queue, kind, seq)
		return e.take(start)
	}
	del := func(k string) { recs = append(recs, persist.Delete([]byte(k))) }
	delPrefix := func(k string) { recs = append(recs, persist.DeletePrefix([]byte(k))) }
	var err error
	put := func(k string, v any) {
		b, e := encode(v)
		if e != nil && err == nil {
			err = e
		}
		recs = append(recs, persist.Put([]byte(k), b))
	}
	if c.Reset {
		delPrefix(prefix)
	}
	for _, q := range c.DeletedQueues {
		k := queueKey(prefix, q)
		del(k)
		delPrefix(k + "/")
	}
	for _, q := range c.Purged {
		k := queueKey(prefix, q)
		delPrefix(k + "/m/")
		delPrefix(k + "/s/")
		delPrefix(k + "/a/")
	}
	for _, r := range c.Removed {
		recs = append(recs, persist.Delete(key(r.Queue, "m", r.Seq)), persist.Delete(key(r.Queue, "s", r.Seq)))
	}
	for _, d := range c.ForgottenDedup {
		del(queueKey(prefix, d.Queue) + "/d/" + d.Key)
	}
	for _, name := range c.ForgottenNames {
		del(prefix + "deleted/" + name)
	}
	for _, q := range c.Queues {
		put(queueKey(prefix, q.Name), q)
	}
	for i := range c.Messages {
		m := &c.Messages[i]
		k := key(m.Queue, "m", m.Seq)
		start := len(e.buf)
		e.buf = appendMessage(e.buf, m)
		recs = append(recs, persist.Put(k, e.take(start)))
	}
	for i := range c.Statuses {
		s := &c.Statuses[i]
		k := key(s.Queue, "s", s.Seq)
		start := len(e.buf)
		e.buf = appendStatus(append(e.buf, formatV1), s)
		recs = append(recs, persist.Put(k, e.take(start)))
	}
	for _, d := range c.Dedup {
		v := make([]byte, 0, 1+len(d.MessageID)+len(d.SequenceNumber)+12)
		v = append(v, formatV1)
		v = appendString(v, d.MessageID)
		v = appendString(v, d.SequenceNumber)
		v = binary.AppendVarint(v, d.At.UnixNano())
		recs = append(recs, persist.Put([]byte(queueKey(prefix, d.Queue)+"/d/"+d.Key), v))
	}
	for _, a := range c.Attempts {
		put(queueKey(prefix, a.Queue)+"/a/"+a.ID, a)
	}
	for _, d := range c.DeletedNames {
		put(prefix+"deleted/"+d.Name, d)
	}
	for _, t := range c.MoveTasks {
		put(prefix+"movetask/"+t.Handle, t)
	}
	return recs, err
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// stateByte is the byte of a state: a switch, not a map, since every
// status written hashes its state otherwise.
func stateByte(s sqs.MessageState) byte {
	switch s {
	case sqs.MessageInflight:
		return 1
	case sqs.MessageDelayed:
		return 2
	}
	return 0 // sqs.MessageVisible
}

var byteStates = [...]sqs.MessageState{sqs.MessageVisible, sqs.MessageInflight, sqs.MessageDelayed}

func appendStatus(b []byte, s *sqs.MessageStatus) []byte {
	b = binary.AppendUvarint(b, s.Order)
	b = append(b, stateByte(s.State))
	b = binary.AppendVarint(b, s.VisibleAt)
	b = binary.AppendVarint(b, s.ReceivedAt)
	b = binary.AppendVarint(b, s.FirstReceiveAt)
	b = binary.AppendUvarint(b, uint64(s.ReceiveCount))
	b = binary.AppendUvarint(b, uint64(s.ReceivesBefore))
	return binary.AppendUvarint(b, uint64(s.HandleGen))
}

// statusLen bounds an encoded status with its format byte: 6 varints of
// at most 10 bytes and the state's byte.
const statusLen = 1 + 6*binary.MaxVarintLen64 + 1

func messageStrings(m *sqs.MessageRecord) [7]string {
	return [...]string{m.SenderID, m.AWSTraceHeader, m.GroupID, m.DeduplicationID, m.SequenceNumber,
		m.DeadLetterSourceArn, m.MD5OfMessageAttributes}
}

// messageLen bounds m's encoding.
func messageLen(m *sqs.MessageRecord) int {
	n := 36 + 32 + binary.MaxVarintLen64 + statusLen + len(m.Body) + binary.MaxVarintLen64
	for _, s := range messageStrings(m) {
		n += len(s) + binary.MaxVarintLen64
	}
	for _, a := range m.Attributes {
		n += len(a.Name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue) + 4*binary.MaxVarintLen64
	}
	return n
}

func appendMessage(b []byte, m *sqs.MessageRecord) []byte {
	strs := messageStrings(m)
	b = append(b, formatV1)
	b = append(b, m.MessageID...)
	b = append(b, m.MD5OfBody...)
	b = binary.AppendVarint(b, m.SentAt)
	b = appendStatus(b, &m.Status)
	for _, s := range strs {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Attributes)))
	for _, a := range m.Attributes {
		b = appendString(b, a.Name)
		b = appendString(b, a.DataType)
		b = appendString(b, a.StringValue)
		b = appendString(b, unsafe.String(unsafe.SliceData(a.BinaryValue), len(a.BinaryValue)))
	}
	return append(b, m.Body...)
}

// reader decodes a binary value; its strings are views of the value, valid
// during Load only (see Recovered): what is kept of them is copied (a
// message's bytes into its queue's memory, a deduplication id by Clone).
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) fixed(n int) string {
	if len(r.b) < n {
		r.bad, r.b = true, nil
		return ""
	}
	s := unsafe.String(unsafe.SliceData(r.b), n)
	r.b = r.b[n:]
	return s
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	return r.fixed(int(n))
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) status(s *sqs.MessageStatus) {
	s.Order = r.uvarint()
	st := r.byte()
	if int(st) >= len(byteStates) {
		r.bad = true
		return
	}
	s.State = byteStates[st]
	s.VisibleAt, s.ReceivedAt, s.FirstReceiveAt = r.varint(), r.varint(), r.varint()
	s.ReceiveCount, s.ReceivesBefore, s.HandleGen = int32(r.uvarint()), int32(r.uvarint()), uint32(r.uvarint())
}

// binaryValue is a reader of value past its format byte: a value, not a
// pointer, so that decoding a message allocates nothing.
func binaryValue(key, value []byte) (reader, error) {
	if len(value) == 0 || value[0] != formatV1 {
		return reader{}, formatError(key, "not format 1")
	}
	return reader{b: value[1:]}, nil
}

// EmitSQS writes the live state of engine e of ns through emit: the part of
// a persist.Snapshotter for one SQS namespace.
func EmitSQS(e *sqs.Engine, ns Namespace, emit func(key, value []byte) error) error {
	prefix := sqsPrefix(ns)
	enc := getEncoded()
	defer enc.release()
	// A page of messages is encoded under its queue's lock, straight from
	// its memory, and written once the lock is released.
	var recs []persist.Record
	var encErr error
	return e.DumpViews(func(c sqs.Change) error {
		recs, encErr = enc.sqsRecords(prefix, c)
		return nil
	}, func() error {
		return emitRecords(recs, encErr, emit) // emit copies what it keeps
	})
}

// loadSQS decodes one key under sqs/ (rest: after "sqs/") into its
// namespace's Restorer.
func (r *Recovered) loadSQS(key, value []byte) error {
	rest := unsafe.String(unsafe.SliceData(key), len(key))[len("sqs/"):]
	account, rest, ok1 := strings.Cut(rest, "/")
	region, rest, ok2 := strings.Cut(rest, "/")
	kind, rest, ok3 := strings.Cut(rest, "/")
	if !ok1 || !ok2 || !ok3 || account == "" || region == "" || rest == "" {
		return formatError(key, "not a key of this version")
	}
	res := r.sqsRestorer(account, region)
	switch kind {
	case "deleted":
		var v sqs.DeletedName
		if err := decode(key, value, &v); err != nil {
			return err
		}
		res.DeletedName(v)
		return nil
	case "movetask":
		var v sqs.MoveTaskState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		res.MoveTask(v)
		return nil
	case "queue":
	default:
		return formatError(key, "not a key of this version")
	}
	name, sub, hasSub := strings.Cut(rest, "/")
	if !hasSub {
		var v sqs.QueueState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		if v.Name != name {
			return formatError(key, "a queue state of another name")
		}
		res.Queue(v)
		return nil
	}
	kind, id, ok := strings.Cut(sub, "/")
	if !ok || name == "" {
		return formatError(key, "not a key of this version")
	}
	switch kind {
	case "m", "s":
		seq, err := parseSeq(id)
		if err != nil {
			return formatError(key, "a message key without its seq")
		}
		rd, err := binaryValue(key, value)
		if err != nil {
			return err
		}
		if kind == "s" {
			st := sqs.MessageStatus{Queue: name, Seq: seq}
			if rd.status(&st); rd.bad || len(rd.b) != 0 {
				return formatError(key, "a malformed message status")
			}
			res.Status(st)
			return nil
		}
		m := sqs.MessageRecord{Queue: name, Seq: seq}
		m.MessageID, m.MD5OfBody = rd.fixed(36), rd.fixed(32)
		m.SentAt = rd.varint()
		m.Status.Queue, m.Status.Seq = name, seq
		rd.status(&m.Status)
		m.SenderID, m.AWSTraceHeader, m.GroupID, m.DeduplicationID = rd.str(), rd.str(), rd.str(), rd.str()
		m.SequenceNumber, m.DeadLetterSourceArn, m.MD5OfMessageAttributes = rd.str(), rd.str(), rd.str()
		if n := rd.uvarint(); n > 0 && n <= uint64(len(rd.b)) {
			m.Attributes = make([]sqs.MessageAttribute, n)
			for i := range m.Attributes {
				a := &m.Attributes[i]
				a.Name, a.DataType, a.StringValue = rd.str(), rd.str(), rd.str()
				if bv := rd.str(); bv != "" {
					a.BinaryValue = unsafe.Slice(unsafe.StringData(bv), len(bv))
				}
			}
		} else if n > 0 {
			rd.bad = true
		}
		if rd.bad {
			return formatError(key, "a malformed message")
		}
		m.Body = unsafe.String(unsafe.SliceData(rd.b), len(rd.b))
		return res.Message(m)
	case "d":
		rd, err := binaryValue(key, value)
		if err != nil {
			return err
		}
		d := sqs.DedupState{Queue: name, Key: id, MessageID: rd.str(), SequenceNumber: rd.str()}
		d.At = time.Unix(0, rd.varint()).UTC()
		if rd.bad || len(rd.b) != 0 {
			return formatError(key, "a malformed deduplication id")
		}
		d.Key, d.MessageID, d.SequenceNumber = strings.Clone(d.Key), strings.Clone(d.MessageID), strings.Clone(d.SequenceNumber)
		res.Dedup(d)
		return nil
	case "a":
		var v sqs.AttemptState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		res.Attempt(v)
		return nil
	}
	return formatError(key, "not a key of this version")
}

func parseSeq(s string) (uint64, error) {
	var b [8]byte
	if len(s) != 16 {
		return 0, ErrFormat
	}
	if _, err := hex.Decode(b[:], unsafe.Slice(unsafe.StringData(s), len(s))); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

// SQSNamespaces lists the namespaces that hold SQS state, sorted.
func (r *Recovered) SQSNamespaces() []Namespace { return sortedNamespaces(r.sqs) }

// SQS returns the Restorer of ns's SQS engine (an empty one when the store
// held nothing of it), for sqs.Restorer.Into.
func (r *Recovered) SQS(ns Namespace) *sqs.Restorer {
	if res := r.sqs[ns]; res != nil {
		return res
	}
	return sqs.NewRestorer()
}

// Discard frees what was recovered and not restored (an open that failed).
func (r *Recovered) Discard() {
	for _, res := range r.sqs {
		res.Discard()
	}
}
