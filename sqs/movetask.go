package sqs

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/id"
)

// Message move tasks redrive messages out of a dead-letter queue, at most
// MaxNumberOfMessagesPerSecond, on the engine's clock.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html

// Move task statuses.
const (
	TaskRunning   = "RUNNING"
	TaskCompleted = "COMPLETED"
	TaskCancelled = "CANCELLED"
	TaskFailed    = "FAILED"
)

// defaultMoveRate is used when no MaxNumberOfMessagesPerSecond is given.
const defaultMoveRate = 500

// MoveTask describes a message move task as ListMessageMoveTasks returns it.
type MoveTask struct {
	TaskHandle     string // only while running
	Status         string
	SourceArn      string
	DestinationArn string
	Rate           int  // messages per second
	RateGiven      bool // whether the task was started with a rate (AWS lists it only then)
	Moved          int64
	ToMove         int64
	FailureReason  string
	Started        time.Time
}

type moveTask struct {
	mu     sync.Mutex
	info   MoveTask
	handle string
	timer  clock.Timer
}

type moveTasks struct {
	mu       sync.Mutex
	bySource map[string][]*moveTask // newest first
	byHandle map[string]*moveTask
}

func (e *Engine) tasks() *moveTasks {
	e.moveOnce.Do(func() {
		e.moves = &moveTasks{bySource: map[string][]*moveTask{}, byHandle: map[string]*moveTask{}}
	})
	return e.moves
}

const arnFormat = "You must use this format to specify the %s: arn:<partition>:<service>:<region>:<account-id>:<resource-id>"

// StartMoveTask starts moving messages out of the dead-letter queue source,
// to dest or, when dest is empty, each back to the queue it came from.
func (e *Engine) StartMoveTask(source, dest string, rate *int) (string, error) {
	if source == "" {
		return "", missing("SourceArn")
	}
	if _, ok := parseArn(source); !ok {
		return "", ErrInvalidParameterValue.New(arnFormat, "SourceArn")
	}
	src := e.queueByArn(source)
	if src == nil {
		return "", ErrResourceNotFound.New("The resource that you specified for the SourceArn parameter doesn't exist.")
	}
	if dest != "" {
		if _, ok := parseArn(dest); !ok {
			return "", ErrInvalidParameterValue.New(arnFormat, "DestinationArn")
		}
		if e.queueByArn(dest) == nil {
			return "", ErrResourceNotFound.New("The resource that you specified for the DestinationArn parameter doesn't exist.")
		}
	}
	r := defaultMoveRate
	if rate != nil {
		r = *rate
		if r < 1 || r > 500 {
			return "", invalidValue(strconv.Itoa(r), "MaxNumberOfMessagesPerSecond", "Must be between 1 and 500.")
		}
	}
	if sources, _ := e.DeadLetterSourceQueues(src.name); len(sources) == 0 {
		return "", ErrInvalidParameterValue.New("Source queue must be configured as a Dead Letter Queue.")
	}
	toMove := int64(src.visibleCount()) // before the task locks: no queue lock under them (doc.go)
	ts := e.tasks()
	ts.mu.Lock()
	for _, t := range ts.bySource[source] {
		t.mu.Lock()
		running := t.info.Status == TaskRunning
		t.mu.Unlock()
		if running {
			ts.mu.Unlock()
			return "", ErrInvalidParameterValue.New("There is already a task running. Only one active task is allowed for a source queue arn at a given time.")
		}
	}
	handleJSON, _ := json.Marshal(map[string]string{"taskId": id.UUID(), "sourceArn": source})
	t := &moveTask{handle: base64.StdEncoding.EncodeToString(handleJSON)}
	t.info = MoveTask{
		Status: TaskRunning, SourceArn: source, DestinationArn: dest, Rate: r, RateGiven: rate != nil,
		ToMove: toMove, Started: e.clock.Now(),
	}
	ts.bySource[source] = append([]*moveTask{t}, ts.bySource[source]...)
	ts.byHandle[t.handle] = t
	t.mu.Lock()
	t.timer = e.clock.AfterFunc(time.Second, func() { e.moveTick(t) })
	w := e.recordTask(t)
	t.mu.Unlock()
	ts.mu.Unlock()
	if err := durable(w); err != nil {
		// Taken back, as if it had never started (a store that refused
		// its record holds nothing of it).
		t.mu.Lock()
		t.info.Status = TaskCancelled // a tick already running stops here
		t.timer.Stop()
		t.mu.Unlock()
		ts.mu.Lock()
		if l := ts.bySource[source]; len(l) > 0 && l[0] == t {
			ts.bySource[source] = l[1:]
		}
		delete(ts.byHandle, t.handle)
		ts.mu.Unlock()
		return "", err
	}
	return t.handle, nil
}

// state is t's durable state. Callers hold t.mu.
func (t *moveTask) state() MoveTaskState { return MoveTaskState{Handle: t.handle, Task: t.info} }

// recordTask records t's state; callers hold t.mu, which orders the
// records of one task.
func (e *Engine) recordTask(t *moveTask) Waiter {
	if e.opts.Journal == nil {
		return nil
	}
	return e.record(Change{MoveTasks: []MoveTaskState{t.state()}})
}

// moveTick moves one second's worth of messages and schedules the next.
func (e *Engine) moveTick(t *moveTask) {
	t.mu.Lock()
	if t.info.Status != TaskRunning {
		t.mu.Unlock()
		return
	}
	info := t.info
	t.mu.Unlock()
	fail := func(reason string) {
		t.mu.Lock()
		t.info.Status, t.info.FailureReason, t.info.TaskHandle = TaskFailed, reason, ""
		e.recordTask(t)
		t.mu.Unlock()
	}
	src := e.queueByArn(info.SourceArn)
	if src == nil {
		fail("AWS.SimpleQueueService.NonExistentQueue")
		return
	}
	left := info.ToMove - info.Moved
	n := int64(info.Rate)
	if left < n {
		n = left
	}
	// Destinations are looked up before the source's lock is taken (no
	// registry lock under a queue lock, doc.go); a message whose destination
	// does not exist stays where it is and fails the task.
	queues := e.queuesByArn()
	msgs, stuck := src.takeForMove(int(n), func(dlqSource string) *Queue {
		dest := info.DestinationArn
		if dest == "" {
			dest = dlqSource
		}
		return queues[dest]
	})
	moved := int64(0)
	for i := range msgs {
		msgs[i].to.redriven(&msgs[i].m, src.name)
		moved++
	}
	if stuck {
		t.mu.Lock()
		t.info.Moved += moved
		t.mu.Unlock()
		fail("AWS.SimpleQueueService.NonExistentQueue")
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.info.Status != TaskRunning {
		return
	}
	t.info.Moved += moved
	// Not waited for (no call waits on a tick). A crash before it is stored
	// undercounts Moved: the task resumes and moves what is left.
	defer e.recordTask(t)
	if len(msgs) == 0 || t.info.Moved >= t.info.ToMove {
		t.info.Status = TaskCompleted
		return
	}
	t.timer = e.clock.AfterFunc(time.Second, func() { e.moveTick(t) })
}

// move is a message taken out of a queue and where it goes.
type move struct {
	m  draft
	to *Queue
}

// takeForMove removes up to n visible messages, oldest first, each with its
// destination (dest is given the message's DeadLetterQueueSourceArn). It
// stops at a message without one (dest returns nil), leaves it in the queue
// and reports stuck. dest must not lock anything.
func (q *Queue) takeForMove(n int, dest func(dlqSource string) *Queue) (out []move, stuck bool) {
	q.lock()
	defer q.unlock()
	q.promote(q.engine.clock.Now())
	source := func(i uint32) string {
		e, _ := q.msgs.ext(q.rec(i))
		return e.dlqSource
	}
	for len(out) < n {
		var i uint32
		if q.fifo != nil {
			g := q.fifo.nextGroup()
			if g == nil {
				break
			}
			to := dest(source(g.msgs.peek()))
			if to == nil {
				q.fifo.markReady(g)
				return out, true
			}
			i = g.msgs.pop()
			q.fifo.visible--
			q.fifo.markReady(g)
			out = append(out, move{q.materialize(i), to})
		} else {
			if i = q.peekVisible(); i == none {
				break
			}
			to := dest(source(i))
			if to == nil {
				return out, true
			}
			q.popVisible()
			out = append(out, move{q.materialize(i), to})
		}
		q.drop(i)
	}
	return out, false
}

// redriven enqueues a moved message as a new message: a new id and send time,
// the same body and attributes. With a journal its removal from the queue
// called from and its arrival here are one Change, recorded under this
// queue's lock, as a dead-letter move's are (Engine.deadLetter says why
// that is sound).
func (q *Queue) redriven(m *draft, from string) {
	c := draft{
		ids: m.ids, body: m.body, attrs: m.attrs, sender: m.sender,
		ext: messageExt{traceHeader: m.ext.traceHeader, groupID: m.ext.groupID, dedupID: m.ext.dedupID},
	}
	id.NewRaw((*[16]byte)(c.ids[:16]))
	q.lock()
	defer q.unlock()
	var ch Change
	if q.journaling() {
		ch.Removed = []MessageRef{{from, m.srcSeq}}
	}
	if q.deleted {
		q.engine.record(ch)
		return
	}
	now := q.engine.clock.Now()
	if q.fifo != nil {
		c.ext.sequenceNum = q.fifo.nextSequence()
	}
	zero := 0
	i := q.enqueue(&c, &zero, now)
	if q.journaling() {
		ch.Messages = []MessageRecord{q.messageView(i, nil)}
		q.withCeiling(&ch)
		q.engine.record(ch)
	}
}

func (q *Queue) visibleCount() int {
	q.lock()
	defer q.unlock()
	q.promote(q.engine.clock.Now())
	if q.fifo != nil {
		return q.fifo.visible
	}
	return q.ready.size + q.returned.len()
}

// ListMoveTasks returns up to max (1-10, default 1) tasks of a source, newest first.
func (e *Engine) ListMoveTasks(source string, max *int) ([]MoveTask, error) {
	if source == "" {
		return nil, missing("SourceArn")
	}
	if _, ok := parseArn(source); !ok {
		return nil, ErrInvalidParameterValue.New(arnFormat, "SourceArn")
	}
	n := 1
	if max != nil {
		n = *max
		if n < 1 || n > 10 {
			return nil, invalidValue(strconv.Itoa(n), "MaxResults", "Must be between 1 and 10.")
		}
	}
	if e.queueByArn(source) == nil {
		return nil, ErrResourceNotFound.New("The resource that you specified for the SourceArn parameter doesn't exist.")
	}
	ts := e.tasks()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []MoveTask
	for _, t := range ts.bySource[source] {
		if len(out) == n {
			break
		}
		t.mu.Lock()
		info := t.info
		if info.Status == TaskRunning {
			info.TaskHandle = t.handle
		}
		t.mu.Unlock()
		out = append(out, info)
	}
	return out, nil
}

// CancelMoveTask cancels a running task and returns how many it moved.
func (e *Engine) CancelMoveTask(handle string) (int64, error) {
	if handle == "" {
		return 0, missing("TaskHandle")
	}
	raw, err := base64.StdEncoding.DecodeString(handle)
	var probe struct{ TaskID, SourceArn string }
	if err != nil || json.Unmarshal(raw, &probe) != nil {
		return 0, ErrInvalidParameterValue.New("Value for parameter TaskHandle is invalid.")
	}
	ts := e.tasks()
	ts.mu.Lock()
	t := ts.byHandle[handle]
	ts.mu.Unlock()
	if t == nil {
		return 0, ErrResourceNotFound.New("Task does not exist.")
	}
	t.mu.Lock()
	if t.info.Status != TaskRunning {
		t.mu.Unlock()
		return 0, ErrResourceNotFound.New("Task does not exist.")
	}
	t.info.Status = TaskCancelled
	if t.timer != nil {
		t.timer.Stop()
	}
	// Kept cancelled if it cannot be stored: a restart may resume it.
	w := e.recordTask(t)
	moved := t.info.Moved
	t.mu.Unlock()
	if err := durable(w); err != nil {
		return 0, err
	}
	return moved, nil
}

// stopMoveTasks stops every pending timer, for Close.
func (e *Engine) stopMoveTasks() {
	if e.moves == nil {
		return
	}
	e.moves.mu.Lock()
	defer e.moves.mu.Unlock()
	for _, t := range e.moves.byHandle {
		t.mu.Lock()
		if t.timer != nil {
			t.timer.Stop()
		}
		t.mu.Unlock()
	}
}
