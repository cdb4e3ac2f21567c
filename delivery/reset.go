package delivery

import (
	"sync"

	"github.com/fanout/fanout/clock"
)

// Reset forgets every delivery: retries and throttled attempts waiting on
// the clock are cancelled (their timers stopped), queued attempts are not
// made, attempts in progress finish but record nothing and schedule nothing,
// and the records, the outbox and the counts start again from empty. The
// dispatcher stays usable. fanout's POST /_fanout/reset and the test helper
// call it.
func (d *Dispatcher) Reset() {
	d.generation.Add(1) // jobs of earlier generations stop at their next step
	d.parked.stopAll(d)
	d.journalReset()
	d.records.mu.Lock()
	d.records.kept = newRing(d.records.kept.max, d.records.kept.budget, d.records.kept.free)
	d.records.mu.Unlock()
	d.outbox.mu.Lock()
	d.outbox.entries = newRing(d.outbox.entries.max, d.outbox.entries.budget, d.outbox.entries.free)
	d.outbox.mu.Unlock()
	d.stats.mu.Lock()
	d.stats.total, d.stats.failures = SubscriptionCounts{}, nil
	d.stats.init()
	d.stats.mu.Unlock()
	d.throttle.mu.Lock()
	d.throttle.next = nil
	d.throttle.mu.Unlock()
}

// stale reports whether j was started before the last Reset.
func (d *Dispatcher) stale(j *job) bool { return j.generation != d.generation.Load() }

// parkedJobs are the jobs waiting on a clock timer, so Reset can stop them.
type parkedJobs struct {
	mu     sync.Mutex
	timers map[*job]clock.Timer
}

// add parks j on a timer; the lock is held while the timer is made so that a
// timer firing at once finds it registered.
func (p *parkedJobs) add(j *job, start func() clock.Timer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timers == nil {
		p.timers = map[*job]clock.Timer{}
	}
	p.timers[j] = start()
}

func (p *parkedJobs) remove(j *job) {
	p.mu.Lock()
	delete(p.timers, j)
	p.mu.Unlock()
}

func (p *parkedJobs) stopAll(d *Dispatcher) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for j, t := range p.timers {
		if t.Stop() {
			d.scheduled.Add(-1)
			d.lanes.finish(j) // its lane stops counting it
		}
		delete(p.timers, j)
	}
}
