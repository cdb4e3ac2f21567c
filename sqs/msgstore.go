package sqs

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/fanout/fanout/internal/id"
)

// store is the memory of one queue's messages: records, their bytes and the
// queue's sender ids. It holds no pointer back to its queue, so a cleanup
// can free it when a queue is dropped without being deleted (newQueue).
type store struct {
	slab    slab
	chunks  chunks
	sender1 string   // record.sender 1, the sender most queues only have
	senders []string // record.sender 2 and on, by record.sender-2
	byName  map[string]uint16
	// sharedRefs counts the records whose body is shared (sharedbody.go),
	// and sharedBytes their bodies' bytes.
	sharedRefs  int
	sharedBytes int64
}

// smallStore is the most a store holds (its chunks' live bytes and its
// shared bodies) for a send to keep its body among the shared bodies even
// when nobody else shares it (enqueue). A queue that holds a few messages
// has small chunks, and the one being appended to is on average half
// empty: with 100,000 queues of six 1 KiB messages each, they took
// 2.3 KB a message, of fresh memory the kernel must find and clear. The
// shared bodies are appended one after another into 1 MiB chunks that all
// queues fill, so such a body costs its bytes and an 8-byte header, and
// the queue's own chunk holds its ids. Past smallStore, a queue's own
// chunks are big enough to be mostly full.
const smallStore = 64 << 10

// keepsShared reports whether a message of n chunk bytes with a body of
// body bytes, not otherwise shared, should keep its body among the shared
// bodies: the store is small and holds messages already, and the chunk
// being appended to has no room for it. An empty queue, or one consumed as
// fast as it is fed, rewinds its chunk and keeps writing into the same
// few bytes, which a round trip of 1 KiB finds in the cache; the shared
// bodies' chunks it would walk through cost it about a tenth more.
func (s *store) keepsShared(n, body int) bool {
	return body >= minShared && s.slab.live > 0 && s.chunks.live+s.sharedBytes < smallStore && !s.chunks.fits(n)
}

// maxSenders bounds a queue's sender table: past it, a sender id is kept in
// each message's bytes instead, so a stream of distinct ids costs what their
// messages cost and goes when they go.
const maxSenders = 1024

// senderInExt marks a record whose sender id is in its ext bytes.
const senderInExt = ^uint16(0)

const recordSize = int(unsafe.Sizeof(record{}))

func (s *store) at(i uint32) *record { return s.slab.at(i) }

// firstPages gives an empty store its first record page and, in the same
// allocation, its first chunk, made for a message of at most n bytes: a
// queue's first message then puts one object on Go's heap, not two, and
// each collection visits one fewer for each of 100,000 such queues. The
// chunk takes the rest of the allocation's size class (Go's heap would
// round it up anyway) and is staged for the reserve that follows; should
// that message need more, tidy drops the staged chunk unused. (Cutting
// both from the shared blocks instead, arena_pool.go, measured no faster
// with 100,000 queues, and each such queue would need its cleanup.)
func (s *store) firstPages(n int) {
	if s.slab.pageCount() != 0 || s.chunks.slots != 0 || s.chunks.staged.b != nil {
		return
	}
	page := pageLen(0) * recordSize
	size := s.chunks.sizeFor(n)
	if page+size >= bigRegion {
		return
	}
	b := slices.Grow([]byte(nil), page+size) // zeroed, as a record page must be
	b = b[:cap(b)]
	s.slab.addPage(region{b: b[:page:page]})
	s.chunks.stage(region{b: b[page:]})
}

// pooled reports whether the store holds memory cut from the shared blocks.
func (s *store) pooled() bool {
	if s.slab.page0.from != nil || s.slab.staged.from != nil || s.chunks.first.mem.from != nil || s.chunks.staged.from != nil {
		return true
	}
	for i := range s.slab.pages {
		if s.slab.pages[i].from != nil {
			return true
		}
	}
	for i := range s.chunks.more {
		if s.chunks.more[i].mem.from != nil {
			return true
		}
	}
	return false
}

// release frees all the store's memory, and drops its references to
// shared bodies.
func (s *store) release() {
	if s.sharedRefs > 0 {
		for i := range s.slab.n {
			if r := s.slab.at(i); r.state != stateGone && r.body != 0 {
				sharedBodies.drop(r.body, r.bodyLen)
			}
		}
		s.sharedRefs, s.sharedBytes = 0, 0
	}
	s.slab.reset()
	s.chunks.reset()
	s.sender1, s.senders, s.byName = "", nil, nil
}

// draft is a message on its way into a queue, or taken out of one (a
// dead-letter or redrive move): ordinary Go strings, owned by nobody else
// once it is out of a queue.
type draft struct {
	ids [bodyAt]byte // MessageId (16 bytes), then the body's MD5 (16)
	// newID: put makes the MessageId in the message's bytes (a send nobody
	// reads the reply of); ids holds only the MD5.
	newID          bool
	body           string
	shared         uint32 // body's ref when it is shared (its caller holds a reference); 0: none
	sharedOwn      bool   // shared's reference is the one the queue keeps, not the caller's
	attrs          []byte // encoded user attributes (encodeAttrs); nil: none
	sender         string
	ext            messageExt
	sentAt         int64 // 0: now
	firstReceiveAt int64
	receiveCount   int32
	receivesBefore int32
	srcSeq         uint64 // taken out of a queue: its seq there, for the record of the move
}

// A message's bytes start with its MessageId and its body's MD5 as bytes,
// half the size of their text, which replies and records show (idsText).
const (
	bodyAt = 16 + 16 // where the body starts in a message's bytes
	hexIDs = 36 + 32 // the MessageId and the MD5 as text, side by side
)

// id is d's MessageId as text.
func (d *draft) id() string {
	var t [36]byte
	id.Format(&t, (*[16]byte)(d.ids[:16]))
	return string(t[:])
}

// idsText writes ids (bodyAt bytes: a MessageId and an MD5) as text into
// dst (hexIDs bytes).
func idsText(dst, ids []byte) {
	id.Format((*[36]byte)(dst[:36]), (*[16]byte)(ids[:16]))
	id.Hex(dst[36:hexIDs], ids[16:bodyAt])
}

// parseIDs is idsText backwards: ok is false unless messageID and md5 are
// in exactly the form idsText writes, so that the text shown is the text
// stored.
func parseIDs(ids *[bodyAt]byte, messageID, md5 string) (ok bool) {
	return id.Parse((*[16]byte)(ids[:16]), messageID) && id.LowerHex(ids[16:], md5)
}

// messageExt holds the system attributes most messages lack. A message's
// MessageGroupId is in its queue's group table, the rest in its ext bytes.
type messageExt struct {
	traceHeader string
	groupID     string
	dedupID     string
	sequenceNum string
	dlqSource   string // ARN of the queue it was dead-lettered from
}

// put stores d's bytes for r and sets r's byte and sender fields. A
// shared body gets one more reference instead of a copy.
func (s *store) put(r *record, d *draft) {
	r.sender = s.senderRef(d.sender)
	r.bodyLen, r.attrLen = uint32(len(d.body)), uint32(len(d.attrs))
	body := d.body
	if d.shared != 0 {
		if !d.sharedOwn {
			sharedBodies.addRef(d.shared)
		}
		r.body, body = d.shared, ""
		s.sharedRefs++
		s.sharedBytes += int64(r.bodyLen)
	}
	if r.sender == senderInExt || d.ext.traceHeader != "" || d.ext.dedupID != "" || d.ext.sequenceNum != "" || d.ext.dlqSource != "" {
		s.putWithExt(r, d, body)
		return
	}
	// Most messages: no rare system attributes.
	r.extLen = 0
	var buf []byte
	r.chunk, r.off, buf = s.chunks.reserve(r.size())
	n := d.putIDs(buf)
	n += copy(buf[n:], body)
	copy(buf[n:], d.attrs)
}

// putIDs writes the MessageId and the body's MD5 at the start of buf.
func (d *draft) putIDs(buf []byte) int {
	n := copy(buf, d.ids[:])
	if d.newID {
		id.NewRaw((*[16]byte)(buf[:16]))
	}
	return n
}

// putWithExt is put for a message with rare system attributes, which its
// ext bytes keep; body is what of d.body goes in its chunk.
func (s *store) putWithExt(r *record, d *draft, body string) {
	extra := ""
	if r.sender == senderInExt {
		extra = d.sender
	}
	fields := [...]string{d.ext.traceHeader, d.ext.dedupID, d.ext.sequenceNum, d.ext.dlqSource, extra}
	ext := 0
	for _, f := range fields {
		ext += uvarintLen(len(f)) + len(f)
	}
	r.extLen = uint32(ext)
	var buf []byte
	r.chunk, r.off, buf = s.chunks.reserve(r.size())
	n := d.putIDs(buf)
	n += copy(buf[n:], body)
	n += copy(buf[n:], d.attrs)
	for _, f := range fields {
		n += binary.PutUvarint(buf[n:], uint64(len(f)))
		n += copy(buf[n:], f)
	}
}

// forget frees r's bytes; the caller frees its slot.
func (s *store) forget(r *record) {
	s.chunks.forget(r)
	if r.body != 0 {
		sharedBodies.drop(r.body, r.bodyLen)
		r.body = 0
		s.sharedRefs--
		s.sharedBytes -= int64(r.bodyLen)
	}
}

// unshare copies r's shared body into its chunk, dropping its reference.
func (s *store) unshare(r *record) {
	old := s.chunks.bytes(r)
	n := r.size() + r.bodyLen
	at, off, buf := s.chunks.reserve(n)
	k := copy(buf, old[:bodyAt])
	k += copy(buf[k:], sharedBodies.body(r.body, r.bodyLen))
	copy(buf[k:], old[bodyAt:])
	s.chunks.forget(r)
	sharedBodies.drop(r.body, r.bodyLen)
	s.sharedRefs--
	s.sharedBytes -= int64(r.bodyLen)
	r.body, r.chunk, r.off = 0, at, off
}

func (s *store) senderRef(id string) uint16 {
	if id == "" {
		return 0
	}
	if id == s.sender1 {
		return 1
	}
	if s.byName == nil {
		// A few senders (most queues have one) are looked up in order: a
		// map would be two more objects per queue for the collector.
		for i, known := range s.senders {
			if known == id {
				return uint16(i + 2)
			}
		}
	} else if i, ok := s.byName[id]; ok {
		return i
	}
	n := s.sendersKnown()
	switch {
	case n >= maxSenders:
		return senderInExt
	case n == 0:
		s.sender1 = internSender(id)
		return 1
	}
	id = internSender(id) // a slice of the request's Authorization header otherwise
	s.senders = append(s.senders, id)
	n++
	switch {
	case n > fewSenders && s.byName == nil:
		s.byName = make(map[string]uint16, n)
		for k := 1; k <= n; k++ {
			s.byName[s.senderAt(uint16(k))] = uint16(k)
		}
	case n > fewSenders:
		s.byName[id] = uint16(n)
	}
	return uint16(n)
}

// sendersKnown counts the queue's sender table.
func (s *store) sendersKnown() int {
	if s.sender1 == "" {
		return 0
	}
	return 1 + len(s.senders)
}

// senderAt returns sender k (record.sender, 1-based).
func (s *store) senderAt(k uint16) string {
	if k == 1 {
		return s.sender1
	}
	return s.senders[k-2]
}

// internedSenders keeps one copy of each sender id for every queue: the
// messages of many queues come from the same few callers, and a copy per
// queue is one more object per queue for the collector to mark. A copy is
// needed at all because the id is a slice of the request's Authorization
// header, which it would pin. Past maxInterned distinct ids, each queue
// keeps its own copy.
var internedSenders struct {
	sync.Mutex
	ids map[string]string
}

const maxInterned = 4096

func internSender(id string) string {
	internedSenders.Lock()
	defer internedSenders.Unlock()
	if s, ok := internedSenders.ids[id]; ok {
		return s
	}
	s := strings.Clone(id)
	if len(internedSenders.ids) < maxInterned {
		if internedSenders.ids == nil {
			internedSenders.ids = map[string]string{}
		}
		internedSenders.ids[s] = s
	}
	return s
}

// fewSenders is the most sender ids a queue looks up without a map.
const fewSenders = 8

// The parts of a stored message, as views of its bytes (valid under the
// queue's lock only): its MessageId and body's MD5 (bodyAt bytes, not
// text), its body, its encoded user attributes.
func (s *store) ids(r *record) []byte { return s.chunks.bytes(r)[:bodyAt] }
func (s *store) body(r *record) []byte {
	if r.body != 0 {
		return sharedBodies.body(r.body, r.bodyLen)
	}
	return s.chunks.bytes(r)[bodyAt : bodyAt+r.bodyLen]
}
func (s *store) attrBytes(r *record) []byte {
	at := bodyAt + r.inlineBody()
	return s.chunks.bytes(r)[at : at+r.attrLen]
}

// textHead returns r's MessageId and MD5 as text (hexIDs bytes), then a
// copy of its body, in one string.
func (s *store) textHead(r *record) string {
	body := s.body(r)
	b := make([]byte, hexIDs+len(body))
	idsText(b, s.ids(r))
	copy(b[hexIDs:], body)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// ext decodes r's rare system attributes (copies); groupID is left for the
// caller, who has the group table.
func (s *store) ext(r *record) (e messageExt, sender string) {
	if r.sender != 0 && r.sender != senderInExt {
		sender = s.senderAt(r.sender)
	}
	if r.extLen == 0 {
		return e, sender
	}
	b := s.chunks.bytes(r)[r.size()-r.extLen:]
	var f [5]string
	for i := range f {
		n, k := binary.Uvarint(b)
		b = b[k:]
		if n > 0 {
			f[i] = string(b[:n])
		}
		b = b[n:]
	}
	e.traceHeader, e.dedupID, e.sequenceNum, e.dlqSource = f[0], f[1], f[2], f[3]
	if r.sender == senderInExt {
		sender = f[4]
	}
	return e, sender
}

func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// encodeAttrs encodes user attributes, sorted by name, after their MD5: per
// attribute its name, data type, string value and binary value, each
// length-prefixed.
func encodeAttrs(list []MessageAttribute, md5 string) []byte {
	n := len(md5)
	for _, a := range list {
		for _, l := range [...]int{len(a.Name), len(a.DataType), len(a.StringValue), len(a.BinaryValue)} {
			n += uvarintLen(l) + l
		}
	}
	b := make([]byte, 0, n)
	b = append(b, md5...)
	for _, a := range list {
		b = binary.AppendUvarint(b, uint64(len(a.Name)))
		b = append(b, a.Name...)
		b = binary.AppendUvarint(b, uint64(len(a.DataType)))
		b = append(b, a.DataType...)
		b = binary.AppendUvarint(b, uint64(len(a.StringValue)))
		b = append(b, a.StringValue...)
		b = binary.AppendUvarint(b, uint64(len(a.BinaryValue)))
		b = append(b, a.BinaryValue...)
	}
	return b
}

// decodeAttrs returns copies of the attributes encodeAttrs encoded and their MD5.
func decodeAttrs(enc []byte) (list []MessageAttribute, md5 string) {
	if len(enc) == 0 {
		return nil, ""
	}
	s := string(enc) // one copy for every string
	md5, s = s[:32], s[32:]
	next := func() string {
		n, k := binary.Uvarint(unsafe.Slice(unsafe.StringData(s), min(len(s), binary.MaxVarintLen64)))
		v := s[k : k+int(n)]
		s = s[k+int(n):]
		return v
	}
	for len(s) > 0 {
		a := MessageAttribute{Name: next(), DataType: next(), StringValue: next()}
		if bv := next(); bv != "" {
			a.BinaryValue = []byte(bv)
		}
		list = append(list, a)
	}
	return list, md5
}
