package sqs

import (
	"strings"
	"time"
)

// Peek looks at a queue's messages without consuming them: no receive count,
// no visibility change, no dead-letter move, no retention sweep. It is what
// fanout's dashboard, GET /_fanout/sqs/queues/{name}/messages and the test
// helper's Peek read. Nothing AWS offers does this; it is fanout's own.
//
// Time is evaluated as a receive would see it now, but without moving
// anything: a message whose delay or visibility timeout has ended is listed
// as visible even if no call has touched the queue since, and a message past
// its retention period is not listed.
//
// A page costs about what it returns, not what the queue holds: the stores
// are walked in order and the walk stops after Limit messages (in-flight
// messages of FIFO groups, at most 120,000, may be walked to find the groups
// they lock).

// MessageState is where a message is, as Peek reports it.
type MessageState string

// The states a message can be in, in the order Peek lists them.
const (
	MessageVisible  MessageState = "visible"  // a receive could return it now
	MessageInflight MessageState = "inflight" // received; hidden until its visibility timeout ends
	MessageDelayed  MessageState = "delayed"  // sent with a delay that has not ended
)

// Limits on one page of Peek.
const (
	DefaultPeekLimit = 100
	MaxPeekLimit     = 1000
)

// PeekOptions choose what Peek returns.
type PeekOptions struct {
	// States filters by state; empty means every state.
	States []MessageState
	// Limit is the most messages returned: 0 or less means DefaultPeekLimit,
	// more than MaxPeekLimit means MaxPeekLimit.
	Limit int
}

// PeekedMessage is one message as Peek sees it.
type PeekedMessage struct {
	MessageID              string
	Body                   string
	MD5OfBody              string
	MessageAttributes      []MessageAttribute // user attributes, sorted by name
	MD5OfMessageAttributes string
	// Attributes are the system attributes a receive asking for All would
	// return (ApproximateReceiveCount as it is now, not counting this look).
	Attributes   []Attribute
	ReceiveCount int
	State        MessageState
	// StateEnds is when a delayed or in-flight message becomes visible; zero
	// for a visible one.
	StateEnds time.Time
	SentAt    time.Time
	ExpiresAt time.Time // when the retention period ends and the message is gone
}

// PeekResult is one page of Peek.
type PeekResult struct {
	Messages []PeekedMessage
	// More reports that more messages matched than Limit allowed.
	More bool
}

// Peek returns up to opts.Limit messages: visible ones first, oldest first
// as receives take them (a message whose delay or visibility timeout ended
// since the queue was last touched comes after the others), then in-flight
// ones by when their visibility timeout ends, then delayed ones by when their
// delay ends. It changes nothing.
func (q *Queue) Peek(opts PeekOptions) (PeekResult, error) {
	want := map[MessageState]bool{}
	for _, s := range opts.States {
		switch s {
		case MessageVisible, MessageInflight, MessageDelayed:
			want[s] = true
		default:
			return PeekResult{}, ErrInvalidParameterValue.New("Unknown message state %q: use visible, inflight or delayed.", string(s))
		}
	}
	if len(want) == 0 {
		want = map[MessageState]bool{MessageVisible: true, MessageInflight: true, MessageDelayed: true}
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultPeekLimit
	}
	limit = min(limit, MaxPeekLimit)

	q.lock()
	defer q.unlock()
	if q.deleted {
		return PeekResult{}, queueDoesNotExist()
	}
	p := peeker{q: q, now: q.engine.clock.Now(), limit: limit}
	p.nowNano = p.now.UnixNano()
	if want[MessageVisible] {
		p.visible()
	}
	if want[MessageInflight] {
		p.hidden(&q.inflight, MessageInflight)
	}
	if want[MessageDelayed] {
		p.hidden(&q.delayed, MessageDelayed)
	}
	return PeekResult{Messages: p.out, More: p.more}, nil
}

// Peek looks at the messages of the queue called name; see Queue.Peek.
func (e *Engine) Peek(name string, opts PeekOptions) (PeekResult, error) {
	q, err := e.Queue(name)
	if err != nil {
		return PeekResult{}, err
	}
	return q.Peek(opts)
}

// ParseMessageStates reads a comma-separated list of states ("visible,inflight"),
// as GET /_fanout/sqs/queues/{name}/messages?state= takes it. Empty means all.
func ParseMessageStates(s string) ([]MessageState, error) {
	var out []MessageState
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		switch st := MessageState(strings.ToLower(f)); st {
		case MessageVisible, MessageInflight, MessageDelayed:
			out = append(out, st)
		default:
			return nil, ErrInvalidParameterValue.New("Unknown message state %q: use visible, inflight or delayed.", f)
		}
	}
	return out, nil
}

// peeker collects one page. It runs under the queue's lock and only reads.
type peeker struct {
	q       *Queue
	now     time.Time
	nowNano int64
	limit   int
	out     []PeekedMessage
	more    bool
}

// full reports whether the page is complete; it notes that more matched.
func (p *peeker) full() bool {
	if len(p.out) >= p.limit {
		p.more = true
		return true
	}
	return false
}

// add lists m in state s unless its retention has ended. It reports whether
// the page can take more.
func (p *peeker) add(i uint32, s MessageState) bool {
	m := p.q.rec(i)
	if p.q.retentionExpired(m, p.now) {
		return true
	}
	if p.full() {
		return false
	}
	r := p.q.render(i, peekAll) // render only reads the record; its receipt handle is dropped
	pm := PeekedMessage{
		MessageID:              r.MessageID,
		Body:                   r.Body,
		MD5OfBody:              r.MD5OfBody,
		MessageAttributes:      r.MessageAttributes, // a fresh copy
		MD5OfMessageAttributes: r.MD5OfAttrs,
		Attributes:             peekAttributes(r.Attributes, m),
		ReceiveCount:           int(m.receiveCount),
		State:                  s,
		SentAt:                 time.Unix(0, m.sentAt).UTC(),
		ExpiresAt:              time.Unix(0, m.sentAt+int64(p.q.config.retentionPeriod)*int64(time.Second)).UTC(),
	}
	if s != MessageVisible {
		pm.StateEnds = time.Unix(0, m.visibleAt).UTC()
	}
	p.out = append(p.out, pm)
	return true
}

var peekAll = receiveReq{sysAll: true, attrNames: []string{"All"}}

// visible lists the messages a receive could take now.
func (p *peeker) visible() {
	q := p.q
	if q.fifo != nil {
		if !p.fifoVisible() {
			return
		}
	} else {
		// ready and returned are each in delivery order: merge them.
		ready, returned := 0, newHeapWalk(&q.returned)
		for {
			r := none
			if ready < q.ready.size {
				r = q.ready.at(ready)
			}
			h := returned.peek()
			m := none
			switch {
			case r == none && h == none:
			case h == none || (r != none && q.rec(r).order() < q.rec(h).order()):
				m = r
				ready++
			default:
				m = returned.next()
			}
			if m == none {
				break
			}
			if !p.add(m, MessageVisible) {
				return
			}
		}
	}
	// Hidden messages whose time has come, not yet moved by a touch.
	for _, h := range []*msgHeap{&q.delayed, &q.inflight} {
		w := newHeapWalk(h)
		for m := w.next(); m != none && q.rec(m).visibleAt <= p.nowNano; m = w.next() {
			if !p.add(m, MessageVisible) {
				return
			}
		}
	}
}

// fifoVisible lists the visible messages of a FIFO queue group by group:
// first the groups a receive would take from, oldest first, then the groups
// locked by a message in flight. It reports whether the page can take more.
func (p *peeker) fifoVisible() bool {
	q := p.q
	seen := map[*group]bool{}
	list := func(g *group) bool {
		if seen[g] || g.msgs.len() == 0 {
			return true
		}
		seen[g] = true
		w := newHeapWalk(&g.msgs)
		for m := w.next(); m != none; m = w.next() {
			if !p.add(m, MessageVisible) {
				return false
			}
		}
		return true
	}
	for _, g := range q.fifo.ready {
		if !list(g) {
			return false
		}
	}
	w := newHeapWalk(&q.inflight)
	for m := w.next(); m != none; m = w.next() {
		if !list(q.groups.of(q.rec(m))) {
			return false
		}
	}
	return true
}

// hidden lists the messages of h (in flight or delayed) whose time has not
// come, in the order they become visible.
func (p *peeker) hidden(h *msgHeap, s MessageState) {
	w := newHeapWalk(h)
	for m := w.next(); m != none; m = w.next() {
		if p.q.rec(m).visibleAt <= p.nowNano {
			continue // listed as visible
		}
		if !p.add(m, s) {
			return
		}
	}
}

// heapWalk yields a msgHeap's messages smallest first without changing it:
// a small frontier heap of positions holds the children of what was yielded,
// so k messages cost O(k log k) however large the heap is.
type heapWalk struct {
	h     *msgHeap
	front []int // positions in h.items, a min-heap by h.less
}

func newHeapWalk(h *msgHeap) *heapWalk {
	w := &heapWalk{h: h}
	if len(h.items) > 0 {
		w.front = []int{0}
	}
	return w
}

func (w *heapWalk) less(i, j int) bool { return w.h.less(w.h.items[w.front[i]], w.h.items[w.front[j]]) }

func (w *heapWalk) peek() uint32 {
	if len(w.front) == 0 {
		return none
	}
	return w.h.items[w.front[0]]
}

func (w *heapWalk) next() uint32 {
	if len(w.front) == 0 {
		return none
	}
	top := w.front[0]
	last := len(w.front) - 1
	w.front[0] = w.front[last]
	w.front = w.front[:last]
	w.down(0)
	for _, c := range []int{2*top + 1, 2*top + 2} {
		if c < len(w.h.items) {
			w.front = append(w.front, c)
			w.up(len(w.front) - 1)
		}
	}
	return w.h.items[top]
}

func (w *heapWalk) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !w.less(i, p) {
			return
		}
		w.front[i], w.front[p] = w.front[p], w.front[i]
		i = p
	}
}

func (w *heapWalk) down(i int) {
	n := len(w.front)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && w.less(r, c) {
			c = r
		}
		if !w.less(c, i) {
			return
		}
		w.front[i], w.front[c] = w.front[c], w.front[i]
		i = c
	}
}

// peekAttributes drops what a never-received message cannot have yet.
func peekAttributes(as []Attribute, m *record) []Attribute {
	if m.receiveCount > 0 {
		return as
	}
	out := as[:0:0]
	for _, a := range as {
		if a.Name != SysApproximateFirstReceiveTimestamp {
			out = append(out, a)
		}
	}
	return out
}
