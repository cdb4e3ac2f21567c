package delivery

import (
	"sync"
	"time"
)

// Defaults of the lanes that remote deliveries (HTTP/S, Lambda, SMTP) run on.
const (
	// DefaultBacklog is how many deliveries one subscription may have
	// pending (queued, in progress or waiting for a retry); past it, new
	// ones overflow: to its dead-letter queue, else dropped.
	DefaultBacklog = 1000
	// slowAfter is how long an attempt may run before its subscription
	// counts as slow: its attempts then come out of the slow budget, so
	// that endpoints that hang cannot take the slots of those that answer.
	slowAfter = 250 * time.Millisecond
	// slowBudget is the slow budget as a multiple of the fast one.
	slowBudget = 4
)

// lanes gives each subscription its own queue and concurrency, served in
// turn from two budgets of attempts in progress: fast subscriptions share
// one, slow ones (an attempt ran past slowAfter) the other. A subscription
// whose attempt is running slow, or ended slow and failed, is suspect: it
// makes one attempt at a time until one succeeds or is quick again. A dead
// endpoint thus holds one slot of the slow budget, never the slots of the
// subscriptions that answer, and a live one misjudged slow (a pause of the
// machine) gets its slot back at once. Goroutines exist only for attempts
// in progress (at most Workers × (1 + slowBudget)); a queued delivery
// costs a pointer.
type lanes struct {
	mu       sync.Mutex
	byArn    map[string]*lane
	ready    []*lane // lanes with queued jobs and room to start one, in turn
	fast     int     // attempts in progress out of the fast budget
	slow     int     // ... out of the slow budget
	maxFast  int
	maxSlow  int
	perLane  int // attempts one subscription may have in progress
	backlog  int
	slowTime time.Duration
	run      func(*job) (failed bool)
	// track holds Settle until a run's counts are given back, not only
	// until its job ends, so that Settle leaves no delivery counted.
	track *tracker
}

// lane is one subscription's deliveries.
type lane struct {
	arn     string
	queue   []*job // waiting for an attempt, oldest first
	running int    // runs in progress
	pending int    // admitted and not ended: queued, in progress or waiting for a retry
	slow    bool   // its last run took longer than slowTime, or one is taking it
	suspect bool   // a run is taking longer than slowTime, or the last one did and failed
	inReady bool
	// For the counts of a subscription that has no outcome yet.
	protocol, endpoint string
}

// limit is how many runs ln may have in progress. Callers hold mu.
func (l *lanes) limit(ln *lane) int {
	if ln.suspect {
		return 1
	}
	return l.perLane
}

// Budgets an attempt in progress is counted in.
const (
	budgetFast = iota + 1
	budgetSlow
)

// run is one job's time on a worker: the budget it is counted in, which
// the slow timer may move, and whether it is over.
type run struct {
	lane   *lane
	job    *job
	budget int
	over   bool
}

func newLanes(workers, perLane, backlog int, exec func(*job) bool, track *tracker) *lanes {
	return &lanes{
		byArn: map[string]*lane{}, maxFast: workers, maxSlow: workers * slowBudget,
		perLane: perLane, backlog: backlog, slowTime: slowAfter, run: exec, track: track,
	}
}

// admit counts a new job in its subscription's lane, or reports that the
// lane is full.
func (l *lanes) admit(j *job) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byArn[j.sub.Arn]
	if ln == nil {
		ln = &lane{arn: j.sub.Arn, protocol: j.sub.Protocol, endpoint: j.sub.Endpoint}
		l.byArn[j.sub.Arn] = ln
	}
	if ln.pending >= l.backlog {
		return false
	}
	ln.pending++
	j.lane = ln
	return true
}

// slowLane reports whether j's subscription is slow now.
func (l *lanes) slowLane(j *job) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return j.lane != nil && j.lane.slow
}

// submit queues an admitted job for an attempt.
func (l *lanes) submit(j *job) {
	l.mu.Lock()
	ln := j.lane
	ln.queue = append(ln.queue, j)
	l.markReady(ln)
	start := l.dispatch()
	l.mu.Unlock()
	l.start(start)
}

// finish stops counting an admitted job that ended.
func (l *lanes) finish(j *job) {
	if j.lane == nil {
		return
	}
	l.mu.Lock()
	j.lane.pending--
	l.forgetIdle(j.lane)
	l.mu.Unlock()
}

// markReady puts ln in turn if it has work it may start. Callers hold mu.
func (l *lanes) markReady(ln *lane) {
	if !ln.inReady && len(ln.queue) > 0 && ln.running < l.limit(ln) {
		ln.inReady = true
		l.ready = append(l.ready, ln)
	}
}

// forgetIdle drops a lane with nothing left to do, unless it is slow: a
// subscription keeps that mark until an attempt of it is quick again.
func (l *lanes) forgetIdle(ln *lane) {
	if ln.pending == 0 && ln.running == 0 && !ln.slow && !ln.suspect && l.byArn[ln.arn] == ln {
		delete(l.byArn, ln.arn)
	}
}

// dispatch takes the jobs that may start now, one per lane per turn.
// Callers hold mu.
func (l *lanes) dispatch() []*run {
	var out []*run
	for progress := true; progress && len(l.ready) > 0; {
		progress = false
		for n := len(l.ready); n > 0; n-- {
			ln := l.ready[0]
			l.ready[0] = nil
			l.ready = l.ready[1:]
			ln.inReady = false
			if r := l.take(ln); r != nil {
				out = append(out, r)
				progress = true
			}
			l.markReady(ln)
		}
	}
	if len(l.ready) == 0 {
		l.ready = nil // let the backing array go
	}
	return out
}

// take starts ln's oldest job if its budget has room. Callers hold mu.
func (l *lanes) take(ln *lane) *run {
	if len(ln.queue) == 0 || ln.running >= l.limit(ln) {
		return nil
	}
	r := &run{lane: ln, budget: budgetFast}
	// A slow lane whose last attempt succeeded (not suspect) may take a fast
	// slot when the slow budget is full: a live endpoint misjudged slow (a
	// pause of the machine) must not wait behind endpoints that hang.
	if ln.slow && (ln.suspect || l.slow < l.maxSlow) {
		if l.slow >= l.maxSlow {
			return nil
		}
		r.budget = budgetSlow
		l.slow++
	} else {
		if l.fast >= l.maxFast {
			return nil
		}
		l.fast++
	}
	ln.running++
	r.job = ln.pop()
	return r
}

// pop removes the lane's oldest job. Callers hold mu.
func (ln *lane) pop() *job {
	j := ln.queue[0]
	ln.queue[0] = nil
	ln.queue = ln.queue[1:]
	if len(ln.queue) == 0 {
		ln.queue = nil
	}
	return j
}

func (l *lanes) start(runs []*run) {
	for _, r := range runs {
		go l.work(r)
	}
}

// work runs jobs until none may start: the job it was given, then others,
// so a busy dispatcher does not start a goroutine per attempt.
func (l *lanes) work(r *run) {
	for r != nil {
		j := r.job
		r.job = nil
		var timer *time.Timer
		if r.budget == budgetFast {
			rr := r
			timer = time.AfterFunc(l.slowTime, func() { l.slowed(rr) })
		}
		epoch := j.epoch // queued jobs are tracked
		l.track.hold(epoch)
		began := time.Now()
		failed := l.run(j) // j may belong to a timer once this returns: touch it no more
		took := time.Since(began)
		if timer != nil {
			timer.Stop()
		}
		l.mu.Lock()
		ln := r.lane
		r.over = true
		l.release(r)
		ln.running--
		ln.slow = took >= l.slowTime
		ln.suspect = ln.slow && failed
		l.markReady(ln)
		l.forgetIdle(ln)
		runs := l.dispatch()
		r = nil
		if len(runs) > 0 {
			r, runs = runs[0], runs[1:]
		}
		l.mu.Unlock()
		l.track.release(epoch, true)
		l.start(runs)
	}
}

// release gives back the budget of a run. Callers hold mu.
func (l *lanes) release(r *run) {
	if r.budget == budgetFast {
		l.fast--
	} else {
		l.slow--
	}
	r.budget = 0
}

// slowed moves a run that has taken slowTime to the slow budget and marks
// its subscription slow, freeing a fast slot for another.
func (l *lanes) slowed(r *run) {
	l.mu.Lock()
	if r.over || r.budget != budgetFast {
		l.mu.Unlock()
		return
	}
	r.lane.slow, r.lane.suspect = true, true
	if l.slow >= l.maxSlow {
		// No room: the run keeps its fast slot. Only more dead endpoints
		// than the slow budget holds can slow the others down.
		l.mu.Unlock()
		return
	}
	l.fast--
	l.slow++
	r.budget = budgetSlow
	runs := l.dispatch()
	l.mu.Unlock()
	l.start(runs)
}

// laneCounts is one subscription's deliveries as the lanes see them.
type laneCounts struct {
	protocol, endpoint       string
	queued, running, pending int
}

// counts returns every lane's counts, and the total queued or in progress.
func (l *lanes) counts() (map[string]laneCounts, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]laneCounts, len(l.byArn))
	var busy int64
	for arn, ln := range l.byArn {
		out[arn] = laneCounts{protocol: ln.protocol, endpoint: ln.endpoint, queued: len(ln.queue), running: ln.running, pending: ln.pending}
		busy += int64(len(ln.queue) + ln.running)
	}
	return out, busy
}
