package crashtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The invariants, each named as the report counts it.
const (
	invLost        = "acknowledged send (or received message) lost"
	invResurrected = "deleted message came back"
	invFIFOOrder   = "FIFO order per group"
	invSeq         = "FIFO sequence number changed or went back"
	invRecvCount   = "receive count went down"
	invDedup       = "FIFO dedup let a second copy in"
	invHTTP        = "acknowledged Publish never delivered to the HTTP subscription"
	invFanout      = "acknowledged Publish missing from a subscribed queue"
	invHandle      = "receipt handle of an in-flight message rejected"
	invInflight    = "in-flight or delayed message visible before its time"
	invBatch       = "batch half applied"
	invClock       = "clock offset went back"
	invTopology    = "queue, topic or subscription lost"
	invPhantom     = "message nobody sent"
	invReplay      = "ReceiveRequestAttemptId retry did not return the lost receive"
	invBoth        = "message in both a dead-letter queue and its source"
	invTask        = "move task lost, failed or not resumed"
	invDupEntry    = "FIFO topic delivered or refused a duplicate deduplication id"
)

var invariants = []string{invLost, invResurrected, invFIFOOrder, invSeq, invRecvCount, invDedup,
	invHTTP, invFanout, invHandle, invInflight, invBatch, invClock, invTopology, invPhantom, invReplay, invBoth, invTask, invDupEntry}

// violations counts each broken invariant once per thing it broke for (a
// lost message is one violation, not one per later check that misses it),
// and keeps a few examples of each.
type violations struct {
	mu       sync.Mutex
	seen     map[string]bool
	count    map[string]int
	examples map[string][]string
}

func newViolations() *violations {
	return &violations{seen: map[string]bool{}, count: map[string]int{}, examples: map[string][]string{}}
}

func (v *violations) add(cycle int, inv, what, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen[inv+"\x00"+what] {
		return
	}
	v.seen[inv+"\x00"+what] = true
	v.count[inv]++
	if len(v.examples[inv]) < 5 {
		v.examples[inv] = append(v.examples[inv], fmt.Sprintf("cycle %d: %s: %s", cycle, what, fmt.Sprintf(format, args...)))
	}
}

func (v *violations) total() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, c := range v.count {
		n += c
	}
	return n
}

// report is one line per invariant, with the examples of the broken ones.
func (v *violations) report() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var b strings.Builder
	for _, inv := range invariants {
		fmt.Fprintf(&b, "  %-70s %d\n", inv+":", v.count[inv])
		for _, e := range v.examples[inv] {
			fmt.Fprintf(&b, "      %s\n", e)
		}
	}
	return b.String()
}

// Queues and topics of the workload. A queue's name in the ledger is its
// name, with "@account/region" for one of the second namespace.
const (
	qStd     = "crash-std"
	qFIFO    = "crash-fifo.fifo"
	qQFIFO   = "crash-query-fifo.fifo" // every call to it is over the Query protocol
	qFanRaw  = "crash-fan-raw"         // subscribed to the topic with raw delivery
	qFanEnv  = "crash-fan-env"         // subscribed with the JSON envelope
	qFanFIFO = "crash-fan-fifo.fifo"   // subscribed to the FIFO topic, raw
	qDLQ     = "crash-redrive-dlq"
	qSrc     = "crash-redrive" // its RedrivePolicy moves a message to qDLQ at its third receive
	qStd2    = qStd + "@" + account2 + "/" + region2
	topic    = "crash-events"
	topic2   = "crash-events.fifo"

	// The second namespace: an access key id of 12 digits chooses the
	// account, the SigV4 scope the region.
	account2 = "111111111111"
	region2  = "eu-west-1"
)

// queues are checked one by one; qSrc and qDLQ as one (each of their
// messages is in exactly one of them), so they are not listed.
var queues = []string{qStd, qFIFO, qQFIFO, qFanRaw, qFanEnv, qFanFIFO, qStd2}

// nameOf splits a ledger queue name into the queue's name and, for the
// second namespace, its account and region.
func nameOf(q string) (name, account, region string) {
	name, ns, ok := strings.Cut(q, "@")
	if ok {
		account, region, _ = strings.Cut(ns, "/")
	}
	return name, account, region
}

func isFIFO(q string) bool { return strings.HasSuffix(q, ".fifo") }

// retried reports whether receives from queue carry a
// ReceiveRequestAttemptId, retried after the restart if the kill cut one
// off. Each such queue has one receiver, so that what a cut-off receive
// took is known: the messages in flight no client holds a handle of.
func retried(q string) bool { return q == qFIFO || q == qQFIFO }

// fanned reports whether a queue gets its messages from a topic.
func fanned(q string) bool { return q == qFanRaw || q == qFanEnv || q == qFanFIFO }

// msg is what the clients know of one message body: bodies are unique per
// queue (a FIFO body is also its deduplication id; a subscribed queue's body
// is the published message).
type msg struct {
	queue, key string
	id         string // MessageId, once a reply or a peek told it
	group      string // FIFO
	counter    int    // FIFO: the body's place in its group
	seq        string // FIFO: the SequenceNumber the send was answered with
	sentAt     time.Time
	delayUntil time.Time // wall time a delayed send's delay ends

	acked    bool // its send was acknowledged, it was received, or it was seen after a restart
	received bool // an acknowledged receive returned it
	deleted  bool // an acknowledged delete deleted it
	delTried bool // a delete was sent, whatever became of it
	gone     bool // absent after a restart although nothing says it must be there
	live     bool // counted in ledger.live
	dupAfter bool // qFanFIFO: a PublishBatch carried, right after it, an entry with its deduplication id and another body

	maxCount     int // highest ApproximateReceiveCount an acknowledged receive showed
	countAtCrash int // maxCount when fanout was last killed
	movedBack    int // qSrc: times a move task sent it back from qDLQ, as far as the clients saw
	resentIn     int // the cycle of the last resend with its deduplication id after a restart
	unansweredIn int // the cycle of its last unanswered send
}

// hnd is a receipt handle a client holds.
type hnd struct {
	m        *msg
	rh       string
	cycle    int       // the cycle of the receive
	until    time.Time // wall time its visibility timeout ends
	inflight bool      // nothing sent since the receive could have ended it early
}

// pub is a Publish to the topic.
type pub struct {
	id, body string
	cycle    int
	acked    bool
	reported bool // found never delivered: reported once
}

// ledger is what the clients were told, shared by every client goroutine.
type ledger struct {
	mu     sync.Mutex
	v      *violations
	cycle  int
	offset time.Duration // the sum of acknowledged clock advances

	msgs    map[string]*msg   // queue + "|" + key
	byID    map[string]*msg   // queue + "|" + MessageId
	groups  map[string][]*msg // queue + "|" + FIFO group: its bodies by counter
	cursor  map[string]int    // the same: the counters below are all deleted or gone
	live    map[string]int    // queue: acknowledged messages not deleted nor gone
	handles map[*hnd]bool

	fifoUnanswered map[*msg]bool // FIFO sends not answered, resent after the restart
	sendBatches    [][]*msg      // SendMessageBatch calls not answered: all or nothing
	delBatches     [][]*msg      // DeleteMessageBatch calls not answered
	pubs           []*pub
	dupes          int // second copies in subscribed queues (allowed)

	// lostAttempt is, by queue, the ReceiveRequestAttemptId of a FIFO
	// receive the kill cut off; visUnknown, messages whose visibility change a kill cut
	// off, which may be in flight for 90 s (three checkpoints' worth of
	// clock) without any client holding their handle, until a receive
	// returns them again.
	lostAttempt map[string]string
	visUnknown  map[*msg]bool

	// parked are messages of qStd and qQFIFO a ChangeMessageVisibilityBatch
	// was acknowledged to hide for a while, whose handles no client uses:
	// by the time on fanout's clock before which they must stay in flight,
	// across restarts and clock moves (their handles are dropped before a
	// checkpoint moves the clock, they are not).
	parked map[*msg]time.Time

	// Move tasks out of qDLQ: how many StartMessageMoveTask calls were
	// acknowledged (ListMessageMoveTasks shows the 10 newest).
	tasksStarted int
	backs        int // messages received again in qSrc after a move task
}

func newLedger(v *violations) *ledger {
	return &ledger{v: v, msgs: map[string]*msg{}, byID: map[string]*msg{}, groups: map[string][]*msg{},
		cursor: map[string]int{}, live: map[string]int{}, handles: map[*hnd]bool{}, fifoUnanswered: map[*msg]bool{}, visUnknown: map[*msg]bool{}, lostAttempt: map[string]string{},
		parked: map[*msg]time.Time{}}
}

func (l *ledger) violate(inv string, m *msg, format string, args ...any) {
	l.v.add(l.cycle, inv, m.queue+" "+m.key, format, args...)
}

// lostInvariant is the invariant a queue's lost message breaks.
func lostInvariant(queue string) string {
	if fanned(queue) {
		return invFanout
	}
	return invLost
}

// keyOf is the ledger's key of a body: a subscribed queue with the envelope
// holds the published message inside JSON.
func keyOf(queue, body string) string {
	if queue != qFanEnv {
		return body
	}
	var env struct{ Message string }
	if json.Unmarshal([]byte(body), &env) != nil || env.Message == "" {
		return "unparsable envelope " + body
	}
	return env.Message
}

// dupSuffix ends the body of a PublishBatch entry that repeats an earlier
// entry's deduplication id (the rest of the body is that entry's): the
// topic must answer it as published and never deliver it.
const dupSuffix = "#dup"

// dupOf is the message whose deduplication id the body key of queue
// repeated, if key is such a duplicate's. Callers hold mu.
func (l *ledger) dupOf(queue, key string) (*msg, bool) {
	if queue != qFanFIFO || !strings.HasSuffix(key, dupSuffix) {
		return nil, false
	}
	m := l.msgs[queue+"|"+strings.TrimSuffix(key, dupSuffix)]
	return m, m != nil
}

// duplicated records that m's PublishBatch carries a duplicate of it.
func (l *ledger) duplicated(m *msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m.dupAfter = true
}

// dupsToSend are, after a restart, up to n acknowledged publishes that had
// a duplicate, sent within the deduplication window (less a margin), other
// than those of skip: their duplicates are published again, and must
// still be dropped.
func (l *ledger) dupsToSend(skip []*msg, n int) []*msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now().Add(l.offset)
	resent := map[*msg]bool{}
	for _, m := range skip {
		resent[m] = true
	}
	var out []*msg
	for _, g := range pubGroups {
		ms := l.groups[qFanFIFO+"|"+g]
		for i := len(ms) - 1; i >= 0 && len(out) < n; i-- {
			m := ms[i]
			if now.Sub(m.sentAt) > 4*time.Minute {
				break
			}
			if m.dupAfter && m.acked && !resent[m] {
				out = append(out, m)
			}
		}
	}
	return out
}

// dupDelivered reports a duplicate's body found in its queue. Callers
// hold mu.
func (l *ledger) dupDelivered(orig *msg, id, where string) {
	l.violate(invDupEntry, orig, "%s as %s: the body of an entry that repeated its deduplication id", where, id)
}

// setLive keeps ledger.live in step. Callers hold mu.
func (l *ledger) setLive(m *msg) {
	live := m.acked && !m.deleted && !m.gone
	if live != m.live {
		m.live = live
		if live {
			l.live[m.queue]++
		} else {
			l.live[m.queue]--
		}
	}
}

func (l *ledger) outstanding(queue string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live[queue]
}

// attempt records a body about to be sent (nothing is known of it yet).
func (l *ledger) attempt(queue, key, group string, counter int) *msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.attemptLocked(queue, key, group, counter)
}

func (l *ledger) attemptLocked(queue, key, group string, counter int) *msg {
	m := l.msgs[queue+"|"+key]
	if m == nil {
		m = &msg{queue: queue, key: key, group: group, counter: counter}
		l.msgs[queue+"|"+key] = m
		if group != "" {
			g := queue + "|" + group
			if counter != len(l.groups[g]) {
				panic(fmt.Sprintf("group %s: counter %d after %d", g, counter, len(l.groups[g])))
			}
			l.groups[g] = append(l.groups[g], m)
		}
	}
	m.sentAt = time.Now().Add(l.offset)
	return m
}

// nextInGroup records the next n bodies of a FIFO group of queue, about to
// be sent.
func (l *ledger) nextInGroup(queue, group string, n int) []*msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := make([]*msg, n)
	prefix := group + "/"
	switch queue {
	case qFanFIFO:
		prefix = "pub-" + prefix
	case qQFIFO:
		prefix = "query-" + prefix
	}
	for i := range ms {
		c := len(l.groups[queue+"|"+group])
		ms[i] = l.attemptLocked(queue, prefix+strconv.Itoa(c), group, c)
	}
	return ms
}

// learnID records a MessageId fanout gave for m and reports whether it is
// the one it gave before. Callers hold mu.
func (l *ledger) learnID(m *msg, id string) bool {
	if m.id == "" {
		m.id = id
		l.byID[m.queue+"|"+id] = m
		return true
	}
	return m.id == id
}

// acked records an acknowledged send of m with its MessageId and, for FIFO,
// SequenceNumber (none for a Publish: the queue's differ from the topic's).
func (l *ledger) acked(m *msg, id, seq string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != "" && !l.learnID(m, id) && m.group != "" {
		l.violate(invDedup, m, "send answered with MessageId %s, but it was %s", id, m.id)
	}
	m.acked = true
	if seq != "" {
		if m.seq != "" && m.seq != seq {
			l.violate(invSeq, m, "sequence number %s, then %s for the same send", m.seq, seq)
		}
		if m.seq == "" && m.counter > 0 {
			// Sends of a group are made one after another: each acknowledged
			// one must have a higher sequence number than the acknowledged
			// ones before it, across crashes too.
			for i := m.counter - 1; i >= 0; i-- {
				if p := l.groups[m.queue+"|"+m.group][i]; p.seq != "" {
					if !seqLess(p.seq, seq) {
						l.violate(invSeq, m, "sequence number %s not above %s of %s", seq, p.seq, p.key)
					}
					break
				}
			}
		}
		m.seq = seq
	}
	l.setLive(m)
}

// delayed records the delay of an acknowledged send made at start (its
// delay ends no earlier than start plus the delay).
func (l *ledger) delayed(m *msg, start time.Time, seconds int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seconds > 0 {
		m.delayUntil = start.Add(time.Duration(seconds) * time.Second)
	}
}

// seqLess compares two SequenceNumbers (decimal strings of up to 128 bits).
func seqLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// received is one message of an acknowledged receive, in reply order.
type received struct {
	id, body, rh string
	count        int
	seq, group   string
}

// receive records an acknowledged ReceiveMessage and returns the handles to
// act on (nil entries for bodies the ledger cannot place).
func (l *ledger) receive(queue string, got []received, vis time.Duration) []*hnd {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	out := make([]*hnd, len(got))
	lastInGroup := map[string]int{}
	for i, r := range got {
		key := keyOf(queue, r.body)
		m := l.msgs[queue+"|"+key]
		if orig, ok := l.dupOf(queue, key); ok {
			l.dupDelivered(orig, r.id, "received")
			continue
		}
		if m == nil {
			l.v.add(l.cycle, invPhantom, queue+" "+key, "received %s, which no client sent", r.id)
			continue
		}
		if l.redelivered(m, r.id) {
			continue
		}
		if queue == qSrc {
			l.movedBack(m, r.id)
		}
		if !l.learnID(m, r.id) && queue != qFanRaw && queue != qFanEnv {
			if m.group != "" {
				l.violate(invDedup, m, "received as %s, but it is %s", r.id, m.id)
			} else {
				l.violate(invPhantom, m, "received as %s, but it is %s", r.id, m.id)
			}
		}
		if m.deleted || m.gone {
			l.violate(invResurrected, m, "received (receive count %d) after %s", r.count, goneWhy(m))
		}
		if r.count <= m.countAtCrash {
			l.violate(invRecvCount, m, "ApproximateReceiveCount %d after a restart; before it, a receive showed %d", r.count, m.countAtCrash)
		}
		if r.count > m.maxCount {
			m.maxCount = r.count
		}
		if m.group != "" {
			l.checkFIFO(m, r, lastInGroup)
		}
		if until, ok := l.parked[m]; ok && time.Now().Add(l.offset).Before(until.Add(-3*time.Second)) {
			l.violate(invInflight, m, "received %s before the end of the visibility timeout an acknowledged ChangeMessageVisibilityBatch gave it", until.Sub(time.Now().Add(l.offset)).Round(time.Second))
		}
		delete(l.parked, m)
		m.received, m.acked = true, true
		l.setLive(m)
		delete(l.visUnknown, m)
		h := &hnd{m: m, rh: r.rh, cycle: l.cycle, until: now.Add(vis), inflight: true}
		if vis > 0 { // with none the message is visible at once: its handle is the receiver's alone
			l.handles[h] = true
		}
		out[i] = h
	}
	return out
}

// movedBack follows a message of qSrc under id: a move task out of qDLQ
// sends it back as a new message, with a new id and no receives yet (a
// dead-letter move keeps both). Callers hold mu.
func (l *ledger) movedBack(m *msg, id string) {
	if m.id == "" || m.id == id {
		return
	}
	delete(l.byID, m.queue+"|"+m.id)
	m.id, m.maxCount, m.countAtCrash = "", 0, 0
	m.movedBack++
	l.backs++
}

func (l *ledger) backsSeen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.backs
}

// cameBack reports whether a move task sent m back from qDLQ.
func (l *ledger) cameBack(m *msg) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return m.movedBack > 0
}

// redelivered reports whether id is a second copy of a published message
// in a subscribed queue, which SNS's at-least-once delivery allows; the
// ledger then follows that copy, unless the first one is still there.
// Callers hold mu.
func (l *ledger) redelivered(m *msg, id string) bool {
	if (m.queue != qFanRaw && m.queue != qFanEnv) || m.id == "" || m.id == id {
		return false
	}
	l.dupes++
	if m.deleted || m.gone {
		delete(l.byID, m.queue+"|"+m.id)
		m.id, m.deleted, m.gone, m.delTried, m.maxCount, m.countAtCrash = "", false, false, false, 0, 0
		l.learnID(m, id)
		l.setLive(m)
		return false
	}
	return true // the first copy is live: the second one is not followed
}

// checkFIFO checks a received FIFO message against its group: within one
// reply a group's messages come in counter order, and the first one is the
// lowest counter the group still holds: every acknowledged send before it
// was deleted (or a delete of it was sent, its reply perhaps lost).
func (l *ledger) checkFIFO(m *msg, r received, lastInGroup map[string]int) {
	if r.group != m.group {
		l.violate(invFIFOOrder, m, "received in group %q, sent in %q", r.group, m.group)
	}
	if m.seq == "" && m.queue == qFanFIFO {
		m.seq = r.seq // the queue's, known once it is received
	}
	if m.seq != "" && r.seq != m.seq {
		l.violate(invSeq, m, "received with SequenceNumber %s, sent with %s", r.seq, m.seq)
	}
	if last, ok := lastInGroup[m.group]; ok {
		if m.counter <= last {
			l.violate(invFIFOOrder, m, "came after %s/%d in one reply", m.group, last)
		}
		lastInGroup[m.group] = m.counter
		return
	}
	lastInGroup[m.group] = m.counter
	g := l.groups[m.queue+"|"+m.group]
	c := l.cursor[m.queue+"|"+m.group]
	for c < len(g) && (g[c].deleted || g[c].delTried || g[c].gone) {
		c++
	}
	l.cursor[m.queue+"|"+m.group] = c
	for i := c; i < m.counter; i++ {
		if p := g[i]; p.acked && !p.deleted && !p.delTried && !p.gone {
			l.violate(invFIFOOrder, m, "received while %s, sent before it, was neither deleted nor being deleted", p.key)
			return
		}
	}
}

func goneWhy(m *msg) string {
	if m.deleted {
		return "an acknowledged delete"
	}
	return "it was absent after a restart"
}

// deleting records that deletes of hs are about to be sent.
func (l *ledger) deleting(hs []*hnd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range hs {
		h.m.delTried = true
	}
}

// deleted records an acknowledged delete of h.
func (l *ledger) deleted(h *hnd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h.m.deleted = true
	l.setLive(h.m)
	delete(l.handles, h)
}

// refused records fanout refusing a handle (code is its error code): a
// violation if the message was in flight under it for a while yet. A
// refused visibility change (vis) changed nothing, so the message was.
func (l *ledger) refused(h *hnd, action, code string, vis bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.handles, h)
	if vis {
		h.inflight = true
	}
	if h.inflight && time.Now().Before(h.until.Add(-3*time.Second)) {
		when := "from the same run"
		if h.cycle < l.cycle {
			when = "from before the restart"
		}
		l.violate(invHandle, h.m, "%s refused a handle %s (%s), %s before its visibility timeout ends", action, when, code, time.Until(h.until).Round(time.Second))
	}
}

// changing records that a visibility change of h is about to be sent.
func (l *ledger) changing(h *hnd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h.inflight = false
}

// changed records an acknowledged visibility change of h to vis.
func (l *ledger) changed(h *hnd, vis time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if vis == 0 {
		delete(l.handles, h)
		return
	}
	h.until, h.inflight = time.Now().Add(vis), true
}

// park records an acknowledged visibility change of h to vis, asked for
// at sent (wall time), and drops its handle: the message must stay in
// flight until then on fanout's clock.
func (l *ledger) park(h *hnd, sent time.Time, vis time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.handles, h)
	l.parked[h.m] = sent.Add(l.offset).Add(vis)
}

// checkParked checks the parked messages of queue (peek) against fanout's
// clock (when: which look this is): each one there is in flight until its
// time; those whose time passed are no longer followed.
func (l *ledger) checkParked(queue string, peek []peeked, when string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now().Add(l.offset)
	state := map[string]string{}
	for _, p := range peek {
		state[p.Body] = p.State
	}
	for m, until := range l.parked {
		if m.queue != queue {
			continue
		}
		if !now.Before(until.Add(-3 * time.Second)) {
			delete(l.parked, m)
			continue
		}
		if st, ok := state[m.key]; ok && st != "inflight" {
			l.violate(invInflight, m, "%s %s, %s before the end of the visibility timeout an acknowledged ChangeMessageVisibilityBatch gave it", st, when, until.Sub(now).Round(time.Second))
			delete(l.parked, m)
		}
	}
}

// forget drops the handle of a visibility change the kill cut off.
func (l *ledger) forget(h *hnd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.handles, h)
	l.visUnknown[h.m] = true
}

func (l *ledger) lostReceive(queue, attempt string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lostAttempt[queue] = attempt
}

// takeLostReceive returns the attempt id of the receive from queue cut
// off by the last kill, if any; the messages of queue (peek) in flight
// that only it can have taken (no client holds their handle, and no
// cut-off visibility change touched them); and those it may have taken
// (in flight, and a cut-off visibility change touched them).
func (l *ledger) takeLostReceive(queue string, peek []peeked) (attempt string, lost, maybe map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := map[*msg]bool{}
	for h := range l.handles {
		held[h.m] = true
	}
	for m := range l.parked {
		held[m] = true
	}
	lost, maybe = map[string]string{}, map[string]string{} // MessageId: what the ledger knows of it
	for _, p := range peek {
		m := l.msgs[queue+"|"+p.Body]
		if p.State != "inflight" || m == nil || held[m] {
			continue
		}
		what := fmt.Sprintf("%s (receive count %d; the clients saw %d)", m.key, p.ReceiveCount, m.maxCount)
		if l.visUnknown[m] {
			maybe[p.MessageID] = what
		} else {
			lost[p.MessageID] = what
		}
	}
	attempt = l.lostAttempt[queue]
	delete(l.lostAttempt, queue)
	return attempt, lost, maybe
}

func (l *ledger) heldHandles() []*hnd {
	l.mu.Lock()
	defer l.mu.Unlock()
	var hs []*hnd
	for h := range l.handles {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].m.queue+hs[i].m.key < hs[j].m.queue+hs[j].m.key })
	return hs
}

// dropHandles forgets every handle and delay: before the clock moves, after
// which no handle's timeout and no delay's end is known any more.
func (l *ledger) dropHandles() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handles = map[*hnd]bool{}
	for _, m := range l.msgs {
		m.delayUntil = time.Time{}
	}
}

// crashed is called once fanout was killed and every client stopped.
func (l *ledger) crashed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		m.countAtCrash = m.maxCount
	}
}

// checkQueue compares one queue's messages after a restart with what the
// clients were told: every acknowledged message not deleted is there, in
// flight if a client holds its handle, with a receive count no lower than
// any receive showed; nothing deleted is; unanswered batches are all there
// or all not. Unanswered sends that are there are adopted as sent.
func (l *ledger) checkQueue(queue string, peek []peeked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	present := map[*msg]peeked{}
	copies := map[*msg]int{}
	for _, p := range peek {
		key := keyOf(queue, p.Body)
		m := l.msgs[queue+"|"+key]
		if orig, ok := l.dupOf(queue, key); ok {
			l.dupDelivered(orig, p.MessageID, "there after a restart")
			continue
		}
		if m == nil {
			l.v.add(l.cycle, invPhantom, queue+" "+key, "%s is there, but no client sent it", p.MessageID)
			continue
		}
		if l.redelivered(m, p.MessageID) {
			continue
		}
		copies[m]++
		if copies[m] > 1 && isFIFO(queue) {
			l.violate(invDedup, m, "%d copies after a restart (%s and %s)", copies[m], present[m].MessageID, p.MessageID)
		}
		present[m] = p
		if queue == qSrc {
			l.movedBack(m, p.MessageID)
		}
		if !l.learnID(m, p.MessageID) && queue != qFanRaw && queue != qFanEnv && copies[m] == 1 {
			l.violate(invPhantom, m, "there as %s, but it was %s", p.MessageID, m.id)
		}
		if m.seq == "" && queue == qFanFIFO {
			m.seq = p.SystemAttributes["SequenceNumber"]
		}
		if m.deleted || m.gone {
			l.violate(invResurrected, m, "there (%s) after %s", p.State, goneWhy(m))
		}
		if p.ReceiveCount < m.maxCount {
			l.violate(invRecvCount, m, "receive count %d after a restart; a receive before it showed %d", p.ReceiveCount, m.maxCount)
		}
		if m.seq != "" && p.SystemAttributes["SequenceNumber"] != m.seq {
			l.violate(invSeq, m, "SequenceNumber %s after a restart, sent with %s", p.SystemAttributes["SequenceNumber"], m.seq)
		}
		if now.Before(m.delayUntil.Add(-time.Second)) && p.State != "delayed" && !m.received {
			l.violate(invInflight, m, "%s after a restart, %s before its delay ends", p.State, time.Until(m.delayUntil).Round(100*time.Millisecond))
		}
		m.acked = true // an unanswered send that landed: sent, from now on
		l.setLive(m)
	}
	for h := range l.handles {
		if h.m.queue != queue {
			continue
		}
		if p, ok := present[h.m]; ok && h.inflight && now.Before(h.until.Add(-3*time.Second)) && p.State != "inflight" {
			l.violate(invInflight, h.m, "%s after a restart, %s before the timeout of a receive the client holds the handle of", p.State, time.Until(h.until).Round(time.Second))
			delete(l.handles, h) // its handle may be stale now: deleting with it would prove nothing
		}
	}
	for _, m := range l.msgs {
		if m.queue != queue || m.deleted || m.gone {
			continue
		}
		if _, ok := present[m]; ok {
			continue
		}
		switch {
		case m.acked && !m.delTried:
			why := "its send was acknowledged"
			if m.resentIn > 0 {
				why = fmt.Sprintf("acknowledged when it was sent again after the restart of cycle %d", m.resentIn)
			}
			if m.unansweredIn > 0 {
				why += fmt.Sprintf("; a send of it the kill of cycle %d cut off", m.unansweredIn)
			}
			if m.received {
				why = "a receive returned it"
			}
			l.violate(lostInvariant(queue), m, "absent after a restart (%s; id %s)", why, m.id)
		case m.acked && m.delTried:
			// an unanswered delete that happened
		default:
			// an unanswered send that did not happen: it must not appear later
		}
		m.gone = true
		l.setLive(m)
	}
	l.sendBatches = checkBatches(l, queue, l.sendBatches, present, "SendMessageBatch")
	l.delBatches = checkBatches(l, queue, l.delBatches, present, "DeleteMessageBatch")
}

// checkBatches checks the unanswered batches of queue and returns the rest.
func checkBatches(l *ledger, queue string, batches [][]*msg, present map[*msg]peeked, action string) [][]*msg {
	var rest [][]*msg
	for _, b := range batches {
		if b[0].queue != queue {
			rest = append(rest, b)
			continue
		}
		in, seen := 0, false
		for _, m := range b {
			if _, ok := present[m]; ok {
				in++
			}
			seen = seen || m.received
		}
		if action == "SendMessageBatch" && seen {
			continue // a receive acted on some of it: absent ones may be deleted
		}
		if in != 0 && in != len(b) {
			keys := make([]string, len(b))
			for i, m := range b {
				keys[i] = m.key
			}
			l.v.add(l.cycle, invBatch, queue+" "+b[0].key, "an unanswered %s of %d: %d there after the restart (%s)", action, len(b), in, strings.Join(keys, " "))
		}
	}
	return rest
}

// unanswered records an unanswered send or delete (a batch of one for
// DeleteMessage and SendMessage).
func (l *ledger) unanswered(send bool, b []*msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if send && b[0].group != "" {
		for _, m := range b {
			l.fifoUnanswered[m] = true
			m.unansweredIn = l.cycle
		}
	}
	if len(b) == 1 {
		return
	}
	if send {
		l.sendBatches = append(l.sendBatches, b)
	} else {
		l.delBatches = append(l.delBatches, b)
	}
}

// fifoToResend is, per group, the FIFO sends to make again after a restart
// with the same deduplication id: the unanswered ones and the last
// acknowledged one (within the 5-minute window, less a margin).
func (l *ledger) fifoToResend() []*msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*msg
	now := time.Now().Add(l.offset)
	names := make([]string, 0, len(l.groups))
	for g := range l.groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		ms := l.groups[g] // in name order: a group's sends are resent in counter order
		start := len(ms)
		for start > 0 && l.fifoUnanswered[ms[start-1]] {
			start--
		}
		if start > 0 {
			start-- // the last one fanout answered
		}
		for _, m := range ms[start:] {
			if now.Sub(m.sentAt) < 4*time.Minute {
				out = append(out, m)
			}
		}
	}
	l.fifoUnanswered = map[*msg]bool{}
	return out
}

// resent checks the reply to a resend of m with its deduplication id (id
// and seq are empty for a Publish: the topic's are not the queue's).
func (l *ledger) resent(m *msg, id, seq string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != "" && m.acked && m.id != "" && (m.id != id || (m.seq != "" && m.seq != seq)) {
		l.violate(invDedup, m, "a resend with its deduplication id after a restart got MessageId %s (SequenceNumber %s), not %s (%s)", id, seq, m.id, m.seq)
		// Follow the new copy from now on, so that one fault is one violation.
		delete(l.byID, m.queue+"|"+m.id)
		m.id, m.seq, m.gone, m.deleted = "", "", false, false
	}
	if m.gone && m.id == "" {
		// The unanswered send did not land: this resend is the send.
		m.gone = false
	}
	if id != "" {
		l.learnID(m, id)
	}
	m.resentIn = l.cycle
	if seq != "" && m.seq == "" {
		m.seq = seq
	}
	m.acked = true
	l.setLive(m)
}

// checkCopies checks, after the resends, that each body of a FIFO queue is
// there once at most, under the MessageId the clients know.
func (l *ledger) checkCopies(queue string, peek []peeked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]int{}
	for _, p := range peek {
		m := l.msgs[queue+"|"+p.Body]
		if orig, ok := l.dupOf(queue, p.Body); ok {
			l.dupDelivered(orig, p.MessageID, "there after the resends")
			continue
		}
		if m == nil {
			continue // reported by checkQueue
		}
		seen[p.Body]++
		if seen[p.Body] > 1 || (m.id != "" && m.id != p.MessageID) {
			l.violate(invDedup, m, "there as %s after resending its deduplication id (known as %s)", p.MessageID, m.id)
		}
		if m.deleted {
			l.violate(invResurrected, m, "there as %s after resending its deduplication id, though deleted", p.MessageID)
		}
	}
}

func (l *ledger) publishing(body string) *pub {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &pub{body: body, cycle: l.cycle}
	// the queues hold it only if the publish was acknowledged
	l.pubs = append(l.pubs, p)
	l.attemptLocked(qFanRaw, body, "", 0)
	l.attemptLocked(qFanEnv, body, "", 0)
	return p
}

func (l *ledger) published(p *pub, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.id, p.acked = id, true
	for _, q := range []string{qFanRaw, qFanEnv} {
		m := l.msgs[q+"|"+p.body]
		m.acked = true
		l.setLive(m)
	}
}

// undelivered lists the acknowledged publishes of earlier cycles that the
// HTTP endpoint has not had.
func (l *ledger) undelivered(delivered func(id string) bool) []*pub {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*pub
	rest := l.pubs[:0]
	for _, p := range l.pubs {
		switch {
		case !p.acked && p.cycle < l.cycle:
			// unanswered and one restart ago: forget it
		case p.reported:
		case p.acked && p.cycle < l.cycle && !delivered(p.id):
			out = append(out, p)
			rest = append(rest, p)
		case p.acked && delivered(p.id):
		default:
			rest = append(rest, p)
		}
	}
	l.pubs = rest
	return out
}

// mergePair joins three looks at qSrc and qDLQ, taken in the order dlqA,
// src, dlqC, into one list to check as qSrc's. While they are taken a move
// task may send messages from qDLQ back to qSrc (nothing moves the other
// way without a receive, and the checkpoint receives nothing from qSrc):
// a body in both looks at qDLQ and in qSrc was in both queues at once;
// one in qDLQ then qSrc was moved between the looks.
func (l *ledger) mergePair(dlqA, src, dlqC []peeked) []peeked {
	inA, inC := map[string]bool{}, map[string]bool{}
	for _, p := range dlqA {
		inA[p.Body] = true
	}
	for _, p := range dlqC {
		inC[p.Body] = true
	}
	out := append([]peeked(nil), src...)
	inSrc := map[string]bool{}
	for _, p := range src {
		inSrc[p.Body] = true
		if inA[p.Body] && inC[p.Body] {
			l.v.add(l.cycle, invBoth, qSrc+" "+p.Body, "in %s as %s (%s, receive count %d) and in %s all along", qSrc, p.MessageID, p.State, p.ReceiveCount, qDLQ)
		}
	}
	for _, p := range append(dlqA, dlqC...) {
		if !inSrc[p.Body] {
			inSrc[p.Body] = true
			out = append(out, p)
		}
	}
	return out
}

// pairMissing reports whether an acknowledged message of qSrc is in none
// of the looks (a move task's message is out of qDLQ a moment before it is
// in qSrc, so the checkpoint looks again before it calls it lost).
func (l *ledger) pairMissing(merged []peeked) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	there := map[string]bool{}
	for _, p := range merged {
		there[p.Body] = true
	}
	for _, m := range l.msgs {
		if m.queue == qSrc && m.acked && !m.deleted && !m.delTried && !m.gone && !there[m.key] {
			return true
		}
	}
	return false
}

func (l *ledger) taskStarted() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tasksStarted++
}

// checkTasks checks qDLQ's move tasks after a restart: every acknowledged
// start is listed (ListMessageMoveTasks shows the 10 newest), and none
// failed or was cancelled (nothing cancels them, and their destination
// always exists). It returns how many are running.
func (l *ledger) checkTasks(statuses []string) (running int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if want := min(l.tasksStarted, 10); len(statuses) < want {
		l.v.add(l.cycle, invTask, fmt.Sprintf("%s tasks, cycle %d", qDLQ, l.cycle), "%d move tasks listed after a restart, %d were acknowledged as started", len(statuses), l.tasksStarted)
	}
	for i, st := range statuses {
		switch st {
		case "RUNNING":
			running++
		case "COMPLETED":
		default:
			l.v.add(l.cycle, invTask, fmt.Sprintf("%s task %d, cycle %d", qDLQ, i, l.cycle), "a move task is %s after a restart", st)
		}
	}
	return running
}
