package delivery

import (
	"context"
	"sync"
)

// tracker counts the jobs being worked on (queued for the pool or making
// attempts), by epoch, so that Settle can wait for the work that was due
// when it was called without waiting for work that came after. A job that
// parks on a timer stops counting; when the timer fires it counts again, in
// the epoch of that moment.
type tracker struct {
	mu      sync.Mutex
	epoch   uint64
	active  map[uint64]int
	waiters int
	changed chan struct{}
}

func (t *tracker) init() {
	t.active = map[uint64]int{}
	t.changed = make(chan struct{})
}

// begin counts j in the current epoch.
func (t *tracker) begin(j *job) {
	t.mu.Lock()
	j.epoch, j.tracked = t.epoch, true
	t.active[j.epoch]++
	t.mu.Unlock()
}

// hold counts one more piece of work in epoch, which must still have a job
// counted (the caller's): Settle then also waits for what the caller does
// after that job stops counting. Undone by release(epoch, true).
func (t *tracker) hold(epoch uint64) {
	t.mu.Lock()
	t.active[epoch]++
	t.mu.Unlock()
}

// end stops counting j, if it was counted.
func (t *tracker) end(j *job) {
	tracked := j.tracked
	j.tracked = false
	t.release(j.epoch, tracked)
}

// release stops counting a job of epoch, if it was counted.
func (t *tracker) release(epoch uint64, tracked bool) {
	if !tracked {
		return
	}
	t.mu.Lock()
	if t.active[epoch]--; t.active[epoch] == 0 {
		delete(t.active, epoch)
	}
	if t.waiters > 0 {
		close(t.changed)
		t.changed = make(chan struct{})
	}
	t.mu.Unlock()
}

// settle waits until no job of the current or an earlier epoch is counted.
func (t *tracker) settle(ctx context.Context) error {
	t.mu.Lock()
	e := t.epoch
	t.epoch++
	t.waiters++
	defer func() {
		t.mu.Lock()
		t.waiters--
		t.mu.Unlock()
	}()
	for {
		busy := false
		for k := range t.active {
			if k <= e {
				busy = true
				break
			}
		}
		if !busy {
			t.mu.Unlock()
			return nil
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		t.mu.Lock()
	}
}
