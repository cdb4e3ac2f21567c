package delivery

import "sync"

// pool runs jobs on at most max goroutines. Jobs wait in a queue that costs
// a pointer each; workers start when there is work and exit when there is
// none, so an idle dispatcher holds no goroutines.
type pool struct {
	mu      sync.Mutex
	queue   []*job
	running int
	max     int
	run     func(*job)
}

func newPool(max int, run func(*job)) *pool { return &pool{max: max, run: run} }

func (p *pool) submit(j *job) {
	p.mu.Lock()
	p.queue = append(p.queue, j)
	start := p.running < p.max
	if start {
		p.running++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

func (p *pool) work() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.running--
			p.mu.Unlock()
			return
		}
		j := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		p.run(j)
	}
}
