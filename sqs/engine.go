package sqs

import (
	"context"
	"maps"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/clock"
)

// Options configure an Engine.
type Options struct {
	Clock   clock.Clock // default clock.Real
	Region  string      // default us-east-1
	Account string      // default 000000000000
	// NoRecreateWait turns off AWS's rule that a queue name cannot be reused
	// within 60 seconds of deleting it (QueueDeletedRecently).
	NoRecreateWait bool
	// NoPurgeWait turns off AWS's one-purge-per-60-seconds rule.
	NoPurgeWait bool
	// Journal, when set, receives every durable state change (journal.go).
	Journal Journal
}

// Engine holds the queues of one account and region.
type Engine struct {
	opts    Options
	clock   clock.Clock
	mu      sync.RWMutex
	queues  map[string]*Queue
	deleted map[string]time.Time // name -> when it was deleted
	lastSeq map[string]uint64    // name -> the last seq of the queue deleted, for the next of that name
	closing chan struct{}
	closeMu sync.Once

	moveOnce sync.Once
	moves    *moveTasks
}

// New returns an empty engine.
func New(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.Account == "" {
		opts.Account = "000000000000"
	}
	e := &Engine{
		opts:    opts,
		clock:   opts.Clock,
		queues:  map[string]*Queue{},
		deleted: map[string]time.Time{},
		lastSeq: map[string]uint64{},
		closing: make(chan struct{}),
	}
	registerEngine(e)
	return e
}

// Close ends every long poll in progress (they return no messages).
func (e *Engine) Close() {
	e.closeMu.Do(func() {
		close(e.closing)
		e.tasks()
		e.stopMoveTasks()
	})
}

// Region returns the engine's region.
func (e *Engine) Region() string { return e.opts.Region }

// Account returns the engine's account id.
func (e *Engine) Account() string { return e.opts.Account }

// Clock returns the clock every timed behaviour reads.
func (e *Engine) Clock() clock.Clock { return e.clock }

// Arn returns the ARN of the queue called name.
func (e *Engine) Arn(name string) string {
	return "arn:aws:sqs:" + e.opts.Region + ":" + e.opts.Account + ":" + name
}

var queueNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// CreateQueue creates a queue, or returns the existing one when every given
// attribute equals its current value.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html
func (e *Engine) CreateQueue(name string, attrs, tags map[string]string) (*Queue, error) {
	if name == "" {
		return nil, missing("QueueName")
	}
	fifo := strings.EqualFold(attrs[AttrFifoQueue], "true")
	if fifo {
		base, ok := strings.CutSuffix(name, ".fifo")
		if !ok || len(name) > 80 || !queueNameRE.MatchString(base) {
			return nil, ErrInvalidParameterValue.New("The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
		}
	} else if !queueNameRE.MatchString(name) {
		if strings.HasSuffix(name, ".fifo") && queueNameRE.MatchString(strings.TrimSuffix(name, ".fifo")) && len(name) <= 80 {
			return nil, ErrInvalidParameterValue.New("The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
		}
		return nil, ErrInvalidParameterValue.New("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	if v, ok := attrs[AttrFifoQueue]; ok && !fifo && !strings.EqualFold(v, "false") {
		return nil, ErrInvalidAttributeValue.New("Invalid value for the parameter FifoQueue.")
	}
	if err := checkTags(tags); err != nil {
		return nil, err
	}

	targets := e.redriveTargets(attrs, "")
	registryLocking()
	e.mu.Lock()
	now := e.clock.Now()
	if q, ok := e.queues[name]; ok {
		e.mu.Unlock()
		if err := q.sameAttributes(attrs); err != nil {
			return nil, err
		}
		return q, nil
	}
	if at, ok := e.deleted[name]; ok && !e.opts.NoRecreateWait && now.Sub(at) < 60*time.Second {
		e.mu.Unlock()
		return nil, ErrQueueDeletedRecently.New("You must wait 60 seconds after deleting a queue before you can create another with the same name.")
	}
	q := newQueue(e, name, fifo, now)
	if err := q.config.apply(attrs, true, q.arn, targets); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	if len(tags) > 0 {
		q.tags = maps.Clone(tags)
	}
	// A queue made again goes on numbering where its predecessor stopped:
	// a record of the old one's messages still on its way (a dead-letter
	// move's removal) can then never name one of the new one's.
	q.seq = e.lastSeq[name]
	q0 := q.seq
	delete(e.lastSeq, name)
	e.queues[q.name] = q
	delete(e.deleted, name)
	var w Waiter
	if e.opts.Journal != nil {
		// Nobody else can see q yet: its state is read without its lock.
		w = e.record(Change{ForgottenNames: []string{name}, Queues: []QueueState{q.state()}})
	}
	e.mu.Unlock()
	if err := durable(w); err != nil {
		e.undoCreate(q, q0)
		return nil, err
	}
	return q, nil
}

// undoCreate removes a queue whose creation could not be stored, unless
// something changed it since (it is then recorded again).
func (e *Engine) undoCreate(q *Queue, seq0 uint64) {
	registryLocking()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.queues[q.name] != q {
		return
	}
	q.lock()
	untouched := q.rev == 0 && q.seq == seq0 && q.msgs.slab.live == 0
	if !untouched {
		e.record(Change{Queues: []QueueState{q.state()}})
		q.unlock()
		return
	}
	q.unlock()
	delete(e.queues, q.name)
	e.lastSeq[q.name] = seq0
	q.markDeleted(time.Time{})
	e.record(Change{DeletedQueues: []string{q.name}})
}

// redriveTargets reads the settings of the queue a RedrivePolicy in attrs
// names, for its validation, unless it is self. It takes the registry lock
// and then the target's lock, so the caller must hold neither the registry
// lock nor any queue's lock (see doc.go).
func (e *Engine) redriveTargets(attrs map[string]string, self string) redriveTargets {
	v := attrs[AttrRedrivePolicy]
	if v == "" {
		return nil
	}
	p, err := parseRedrive(v)
	if err != nil || p.DeadLetterTargetArn == self {
		return nil
	}
	q := e.queueByArn(p.DeadLetterTargetArn)
	if q == nil {
		return nil
	}
	c := q.cfg()
	return redriveTargets{q.arn: {fifo: c.fifo, allow: c.redriveAllow}}
}

// queuesByArn returns every queue by its ARN.
func (e *Engine) queuesByArn() map[string]*Queue {
	registryLocking()
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make(map[string]*Queue, len(e.queues))
	for _, q := range e.queues {
		out[q.arn] = q
	}
	return out
}

func (e *Engine) queueByArn(arn string) *Queue {
	registryLocking()
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.lookupArn(arn)
}

func (e *Engine) lookupArn(s string) *Queue {
	a, ok := parseArn(s)
	if !ok || a.service != "sqs" || a.region != e.opts.Region || a.account != e.opts.Account {
		return nil
	}
	return e.queues[a.resource]
}

// QueueByArn returns the queue an ARN names, or QueueDoesNotExist.
func (e *Engine) QueueByArn(arn string) (*Queue, error) {
	if q := e.queueByArn(arn); q != nil {
		return q, nil
	}
	return nil, queueDoesNotExist()
}

// Queue returns the queue called name, or QueueDoesNotExist.
func (e *Engine) Queue(name string) (*Queue, error) {
	registryLocking()
	e.mu.RLock()
	q := e.queues[name]
	e.mu.RUnlock()
	if q == nil {
		return nil, queueDoesNotExist()
	}
	return q, nil
}

// DeleteQueue deletes a queue and its messages; long polls on it return empty.
func (e *Engine) DeleteQueue(name string) error {
	registryLocking()
	e.mu.Lock()
	q := e.queues[name]
	if q == nil {
		e.mu.Unlock()
		return queueDoesNotExist()
	}
	delete(e.queues, name)
	at := e.clock.Now()
	e.deleted[name] = at
	// Its lock under the registry's (doc.go allows it), so that no queue
	// of that name is made before its last seq is known.
	seq, w := q.markDeleted(at)
	e.lastSeq[name] = seq
	e.mu.Unlock()
	// Kept if it cannot be stored: its messages' memory is gone.
	return durable(w)
}

// ListQueues returns the names of queues starting with prefix, sorted.
func (e *Engine) ListQueues(prefix string) []string {
	registryLocking()
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []string
	for n := range e.queues {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// DeadLetterSourceQueues returns the names of the queues whose RedrivePolicy
// targets the queue called name, sorted.
func (e *Engine) DeadLetterSourceQueues(name string) ([]string, error) {
	dlq, err := e.Queue(name)
	if err != nil {
		return nil, err
	}
	registryLocking()
	e.mu.RLock()
	qs := make([]*Queue, 0, len(e.queues))
	for _, q := range e.queues {
		qs = append(qs, q)
	}
	e.mu.RUnlock()
	var out []string
	for _, q := range qs {
		if rp := q.cfg().redrive; rp != nil && rp.DeadLetterTargetArn == dlq.arn {
			out = append(out, q.name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func checkTags(tags map[string]string) *awserr.Error {
	if len(tags) > 50 {
		return ErrInvalidParameterValue.New("Too many tags added for queue. The maximum is 50.")
	}
	for k, v := range tags {
		if k == "" || len(k) > 128 {
			return ErrInvalidParameterValue.New("Tag keys must be between 1 and 128 characters in length.")
		}
		if len(v) > 256 {
			return ErrInvalidParameterValue.New("Tag values must be between 0 and 256 characters in length.")
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// waitForWork blocks until a poll is woken, its deadline passes, ctx ends,
// the queue is deleted or the engine closes. It reports false when the wait
// should stop.
func (e *Engine) waitForWork(ctx context.Context, woken, expired, gone <-chan struct{}) bool {
	select {
	case <-woken:
		return true
	case <-expired:
		return true
	case <-gone:
		return false
	case <-ctx.Done():
		return false
	case <-e.closing:
		return false
	}
}

func newUID() uint64 { return rand.Uint64() }
