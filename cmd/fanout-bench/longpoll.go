package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// long-polls: --polls ReceiveMessage long polls (WaitTimeSeconds 20, the
// fanout HTTP/JSON protocol, one keep-alive connection each) wait on
// --poll-queues queues; senders put stamped messages on random queues at
// --poll-rate, and the wake latency is from just before a send until a poll
// returns that message. The baseline side has the same polls per queue on
// one queue. Set-up reports memory per waiting poll and fanout's CPU while
// they all wait with nothing sent.

// waitSeconds is the polls' WaitTimeSeconds: 20, shorter only in tests.
func (cfg *config) waitSeconds() int {
	if cfg.pollWait > 0 {
		return cfg.pollWait
	}
	return 20
}

// pollSet is the pollers of one side; they outlive the runs, so that the
// timed phases see polls that are already waiting.
type pollSet struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	settled atomic.Int64 // pollers past their first return (see poll)

	mu       sync.Mutex
	ph       *phase // the timed phase being sampled, nil when none
	lat      histogram
	errors   uint64
	firstErr string
}

// startPolls starts n pollers spread over queues, ramped in batches so the
// server's accept queue keeps up.
func startPolls(ctx context.Context, c *rawClient, queues []string, n, wait int) *pollSet {
	ctx, cancel := context.WithCancel(ctx)
	ps := &pollSet{cancel: cancel}
	for i := range n {
		q := queues[i%len(queues)]
		ps.wg.Go(func() { ps.poll(ctx, c, q, wait) })
		if i%500 == 499 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return ps
}

// poll long-polls q until ctx ends, deleting what it receives. All polls
// start within a second or two and would then expire together every 20 s,
// a burst no real fleet keeps up for long; so a poll's first empty return
// pauses it for a random part of the wait once, and from then on the
// polls' expiries are spread evenly.
func (ps *pollSet) poll(ctx context.Context, c *rawClient, q string, wait int) {
	first := true
	for ctx.Err() == nil {
		msgs, err := c.receiveMessage(ctx, q, 10, wait)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			ps.fail(err)
			sleepCtx(ctx, 10*time.Millisecond)
			continue
		}
		if first {
			first = false
			if len(msgs) == 0 {
				sleepCtx(ctx, rand.N(time.Duration(wait)*time.Second))
			}
			ps.settled.Add(1)
		}
		if len(msgs) == 0 {
			continue
		}
		ps.record(now, msgs)
		if err := c.deleteMessageBatch(ctx, q, receipts(msgs)); err != nil && ctx.Err() == nil {
			ps.fail(err)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (ps *pollSet) fail(err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.ph == nil {
		return
	}
	ps.errors++
	if ps.firstErr == "" {
		ps.firstErr = err.Error()
	}
}

// record samples the wake latency of messages stamped during the phase
// being sampled.
func (ps *pollSet) record(now time.Time, msgs []message) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.ph == nil {
		return
	}
	for _, m := range msgs {
		if ts, ok := stampOf(m.body); ok && !ts.Before(ps.ph.start) {
			ps.lat.record(now.Sub(ts))
		}
	}
}

// arm starts sampling for timed phase ph (again a no-op for the same ph).
func (ps *pollSet) arm(ph *phase) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.ph != ph {
		ps.ph, ps.lat, ps.errors, ps.firstErr = ph, histogram{}, 0, ""
	}
}

// take stops sampling and returns the samples as the "wake" op.
func (ps *pollSet) take() *opStats {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	st := &opStats{messages: ps.lat.count(), errors: ps.errors, firstErr: ps.firstErr}
	st.calls = st.messages + st.errors
	st.lat.merge(&ps.lat)
	ps.ph, ps.lat = nil, histogram{}
	return st
}

func (ps *pollSet) stop() {
	ps.cancel()
	ps.wg.Wait()
}

// checkFDs makes sure this process may open n more descriptors: Go raises
// the soft RLIMIT_NOFILE to the hard limit at start; this raises it again
// if something lowered it, and says what to do when the hard limit is
// too low. fanout, also a Go program, raises its own the same way.
func checkFDs(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	need := uint64(n) + 1024
	if lim.Cur < need && lim.Cur < lim.Max {
		lim.Cur = min(lim.Max, max(need, lim.Cur))
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return err
		}
	}
	if lim.Cur < need {
		return fmt.Errorf("%d long polls need about %d file descriptors here and in fanout, and RLIMIT_NOFILE allows %d (raise the hard limit: ulimit -Hn, or LimitNOFILE for a service)", n, need, lim.Cur)
	}
	return nil
}

// serverGoroutines reads the number of goroutines in fanout (with --pprof).
func serverGoroutines(ctx context.Context, t *target) (int, error) {
	m, err := runtimeMetrics(ctx, t.endpoint)
	if err != nil {
		return 0, err
	}
	g, ok := m["/sched/goroutines:goroutines"]
	if !ok {
		return 0, errors.New("no goroutine count in /_fanout/debug/runtime")
	}
	return int(g), nil
}

func setupLongPolls(ctx context.Context, se *scaleEnv, side *scaleSide) error {
	n := side.count
	wait := se.cfg.waitSeconds()
	nq := se.cfg.pollQueues
	if side.name == "one" {
		nq = 1
	}
	if err := checkFDs(n); err != nil {
		return err
	}
	urls, err := createQueues(ctx, se, se.raw, se.prefix, nq)
	if err != nil {
		return err
	}
	side.queues = urls
	m0 := snapMem(ctx, se.tgt)
	g0, gerr := serverGoroutines(ctx, se.tgt)
	c := &rawClient{hc: newHTTPClient(n), endpoint: se.tgt.endpoint}
	start := time.Now()
	side.polls = startPolls(ctx, c, urls, n, wait)
	// Every waiting poll holds at least one goroutine (its connection's).
	g1 := 0
	for gerr == nil && time.Since(start) < 30*time.Second {
		if g1, gerr = serverGoroutines(ctx, se.tgt); gerr != nil || g1 >= g0+n {
			break
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	if gerr != nil {
		return gerr
	}
	if g1 < g0+n {
		return fmt.Errorf("after 30s fanout has %d goroutines, %d before the %d polls: they are not all waiting", g1, g0, n)
	}
	ramp := time.Since(start)
	sleepCtx(ctx, 500*time.Millisecond)
	m1 := snapMem(ctx, se.tgt)
	g1, _ = serverGoroutines(ctx, se.tgt)
	side.notes = append(side.notes, fmt.Sprintf("%d long polls (WaitTimeSeconds %d) waiting on %d queues after %.1fs; fanout's goroutines %+d (%.2f per poll); %s",
		n, wait, nq, ramp.Seconds(), g1-g0, float64(g1-g0)/float64(n), growth(m0, m1, n, "waiting poll")))
	// CPU while they all wait and nothing is sent, before the first expiries.
	if idle := time.Duration(wait)*time.Second - time.Since(start) - 4*time.Second; idle >= 2*time.Second {
		idle = min(idle, 10*time.Second)
		pid := se.tgt.pid()
		c0, err0 := processCPU(pid, clockTick())
		sleepCtx(ctx, idle)
		c1, err1 := processCPU(pid, clockTick())
		if err0 == nil && err1 == nil {
			side.notes = append(side.notes, fmt.Sprintf("fanout's CPU while the %d polls wait and nothing is sent: %v over %.0fs (%.2f%% of one core; /proc/<pid>/stat, %v ticks)",
				n, c1-c0, idle.Seconds(), 100*(c1-c0).Seconds()/idle.Seconds(), clockTick()))
		}
	}
	// Wait until every poll has returned once (expiry, then a random pause).
	for side.polls.settled.Load() < int64(n) && time.Since(start) < 3*time.Duration(wait)*time.Second && ctx.Err() == nil {
		sleepCtx(ctx, 200*time.Millisecond)
	}
	// The polls' steady cost: they expire and poll again, nothing is sent.
	if n >= 1000 && ctx.Err() == nil {
		const d = 5 * time.Second
		pid := se.tgt.pid()
		rt0, _ := runtimeMetrics(ctx, se.tgt.endpoint)
		c0, err0 := processCPU(pid, clockTick())
		sleepCtx(ctx, d)
		c1, err1 := processCPU(pid, clockTick())
		rt1, _ := runtimeMetrics(ctx, se.tgt.endpoint)
		if err0 == nil && err1 == nil {
			per := float64(n) / float64(wait) // expiries per second
			note := fmt.Sprintf("fanout's CPU with the polls' expiries spread (%.0f a second) and nothing sent: %v over %v (%.1f%% of one core, %.0fµs per expiry and new poll)",
				per, c1-c0, d, 100*(c1-c0).Seconds()/d.Seconds(), (c1-c0).Seconds()*1e6/(per*d.Seconds()))
			if share, ok := gcShare(rt0, rt1); ok {
				note += fmt.Sprintf("; the collector %.0f%% of it", 100*share)
			}
			side.notes = append(side.notes, note)
		}
	}
	return ctx.Err()
}

func prepareLongPolls(_ context.Context, e *env) (*workload, error) {
	s := e.side
	ps := s.polls
	pad := payload(e.size)
	// Each of the --clients senders sends every interval, so all together
	// send at --poll-rate.
	interval := time.Duration(float64(time.Second) * float64(e.cfg.clients) / float64(e.cfg.pollRate))
	return &workload{
		step: func(ctx context.Context, w *worker) error {
			if w.ph.timed {
				ps.arm(w.ph)
			}
			now := time.Now()
			if w.next.IsZero() {
				w.next = now.Add(rand.N(interval))
			}
			if d := w.next.Sub(now); d > 0 {
				sleepCtx(w.ph.stop, d)
				if w.ph.stop.Err() != nil {
					return errStop
				}
			}
			w.next = w.next.Add(interval)
			q := s.queues[rand.IntN(len(s.queues))]
			return w.do("send", func() (int, error) { return 1, e.dp.sendMessage(ctx, q, entry{body: stampedBody(pad)}) })
		},
		finish: func(ctx context.Context, stats statSet) []string {
			sleepCtx(ctx, 200*time.Millisecond) // the last sends' polls return
			wake := ps.take()
			stats["wake"] = wake
			sent := uint64(0)
			if st := stats["send"]; st != nil {
				sent = st.messages
			}
			return []string{fmt.Sprintf("%d of %d messages sent in the timed phase were returned by a waiting poll within it (+200ms)", wake.messages, sent)}
		},
	}, nil
}
