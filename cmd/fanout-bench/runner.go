package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// errStop, returned by a step, ends that worker's loop early (e.g. the queue
// being drained is empty).
var errStop = errors.New("stop")

// env is what a scenario's prepare function gets: the target, the client
// under test and helpers for untimed setup.
type env struct {
	cfg    *config
	tgt    *target
	kind   string     // client kind under test
	dp     dataPlane  // client under test
	ctl    *sdkClient // untimed control plane (queues, topics)
	fill   dataPlane  // untimed bulk pre-fill; the raw client, being fastest
	prefix string     // unique resource-name prefix for this run
	param  int        // variant parameter (--groups, --subs, --filtered), 0 if none
	size   int        // the variant's message body size
	// sinkFail is the variant's --sink-fail share.
	sinkFail float64
	side     *scaleSide // a scale scenario's side, set up once
	mode     string     // a scale scenario's mode (accounts: send, publish)

	cleanups            []func(context.Context) error
	notes               []string // printed under the run's rows
	prefilled           bool     // set-up stored messages, so server RSS is worth printing
	rssBefore, rssAfter int64
}

// workload is what prepare returns: the timed loop and any background
// receivers. Both run during the warm-up and again during the timed phase.
type workload struct {
	workers   int                                        // step goroutines; 0 means --clients
	duration  time.Duration                              // timed phase; 0 means --duration
	step      func(ctx context.Context, w *worker) error // one unit of work
	receivers []func(ctx context.Context, w *worker)     // background goroutines, stopped at phase end
	// finish, if set, runs after the timed phase and the server CPU
	// reading, with the timed phase's stats; it returns notes for the run.
	finish func(ctx context.Context, stats statSet) []string
}

// phase is one warm-up or timed interval, shared by its goroutines.
type phase struct {
	start, end time.Time
	stop       context.Context // done at end, for goroutines waiting on something else
	timed      bool            // false during the warm-up
}

// worker is one goroutine's view of a phase; its stats need no locking.
type worker struct {
	id     int
	ph     *phase
	stats  statSet
	misses int       // consecutive empty receives, for drain
	next   time.Time // a paced sender's next send (long-polls)
}

// do times one call of op; fn returns how many messages the call carried.
// A call cancelled after its phase ended (an interrupt) is not counted.
func (w *worker) do(op string, fn func() (int, error)) error {
	t0 := time.Now()
	n, err := fn()
	d := time.Since(t0)
	if err != nil && w.ph.stop.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	st := w.stats.op(op)
	st.calls++
	if err != nil {
		st.errors++
		if st.firstErr == "" {
			st.firstErr = err.Error()
		}
		return err
	}
	st.messages += uint64(n)
	st.lat.record(d)
	return nil
}

// sample records a latency that is not a call (end-to-end delivery time).
func (w *worker) sample(op string, d time.Duration) {
	st := w.stats.op(op)
	st.messages++
	st.lat.record(d)
}

// runPhase runs the workload for d and returns the merged stats and the
// elapsed time until the last step worker finished its final call.
func runPhase(ctx context.Context, wl *workload, workers int, d time.Duration, timed bool) (statSet, time.Duration) {
	ph := &phase{start: time.Now(), timed: timed}
	ph.end = ph.start.Add(d)
	stop, cancel := context.WithDeadline(ctx, ph.end)
	defer cancel()
	ph.stop = stop

	if wl.workers > 0 {
		workers = wl.workers
	}
	all := make([]*worker, workers+len(wl.receivers))
	for i := range all {
		all[i] = &worker{id: i, ph: ph, stats: statSet{}}
	}
	var steps, bg sync.WaitGroup
	for i := range workers {
		w := all[i]
		steps.Go(func() {
			for time.Now().Before(ph.end) && ctx.Err() == nil {
				err := wl.step(ctx, w)
				if errors.Is(err, errStop) {
					return
				}
				if err != nil {
					time.Sleep(time.Millisecond) // don't spin on a failing server
				}
			}
		})
	}
	for i, recv := range wl.receivers {
		w := all[workers+i]
		bg.Go(func() { recv(ctx, w) })
	}
	steps.Wait()
	elapsed := time.Since(ph.start)
	cancel() // step workers may finish early (drain); receivers stop with them
	bg.Wait()

	total := statSet{}
	for _, w := range all {
		total.merge(w.stats)
	}
	return total, elapsed
}

// result is one timed run of one scenario variant, client kind and target.
type result struct {
	Scenario  string
	Client    string
	Target    string
	Round     int
	Primary   string // op whose calls and messages the CPU figures divide by
	Elapsed   time.Duration
	ServerCPU time.Duration // -1 when unknown (URL target)
	ServerSys time.Duration // the system (kernel) part of ServerCPU; -1 when unknown
	ClientCPU time.Duration
	Ops       statSet
	Notes     []string
	RSSBefore int64 // KiB before prepare, 0 if unknown
	RSSAfter  int64 // KiB after prepare (after any pre-fill)
	Prefilled bool
}

// runOne prepares, warms up and times one run, then deletes what it created.
func runOne(ctx context.Context, v variant, e *env) (*result, error) {
	defer func() {
		// Cleanup must run even when ctx was interrupted.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i := len(e.cleanups) - 1; i >= 0; i-- {
			if err := e.cleanups[i](cctx); err != nil {
				fmt.Fprintf(os.Stderr, "cleanup: %v\n", err)
			}
		}
	}()
	pid := e.tgt.pid()
	if pid != 0 {
		e.rssBefore, _ = processRSS(pid)
	}
	wl, err := v.sc.prepare(ctx, e)
	if err != nil {
		return nil, err
	}
	if pid != 0 {
		e.rssAfter, _ = processRSS(pid)
	}
	if e.cfg.prefault > 0 {
		prefault(e.cfg.prefault)
	}
	if e.cfg.warmup > 0 {
		// A server that rejects every call (say, a feature it lacks) would
		// only produce a screen of errors; report the first one instead.
		warm, _ := runPhase(ctx, wl, e.cfg.clients, e.cfg.warmup, false)
		guard := v.sc.guard
		if guard == "" {
			guard = v.sc.primary
		}
		if st := warm[guard]; st != nil && st.calls > 0 && st.errors == st.calls {
			return nil, fmt.Errorf("every %s call failed during the warm-up: %s", guard, st.firstErr)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var cpu0, sys0 time.Duration = -1, -1
	if pid != 0 {
		if u, s, err := processTimes(pid, clockTick()); err == nil {
			cpu0, sys0 = u+s, s
		}
	}
	self0 := selfCPU()
	timed := e.cfg.duration
	if wl.duration > 0 {
		timed = wl.duration
	}
	var profiled func() string
	if e.cfg.cpuProfile != "" && pid != 0 {
		profiled = startCPUProfile(ctx, e.cfg.cpuProfile, e.tgt, v.name, e.kind, timed)
	}
	stats, elapsed := runPhase(ctx, wl, e.cfg.clients, timed, true)
	self1 := selfCPU()
	cpu1, sys1 := time.Duration(-1), time.Duration(-1)
	if cpu0 >= 0 {
		if u, s, err := processTimes(pid, clockTick()); err == nil {
			cpu1, sys1 = u+s, s
		}
	}
	res := &result{
		Scenario:  v.name,
		Client:    e.kind,
		Target:    e.tgt.name,
		Primary:   v.sc.primary,
		Elapsed:   elapsed,
		ServerCPU: -1,
		ServerSys: -1,
		ClientCPU: self1 - self0,
		Ops:       stats,
		Notes:     e.notes,
		RSSBefore: e.rssBefore,
		RSSAfter:  e.rssAfter,
		Prefilled: e.prefilled,
	}
	if elapsed < timed*9/10 {
		res.Notes = append(res.Notes, fmt.Sprintf("timed phase ended after %.2fs: no work left", elapsed.Seconds()))
	}
	if cpu1 >= 0 {
		res.ServerCPU, res.ServerSys = cpu1-cpu0, sys1-sys0
		if st := stats[v.sc.primary]; st != nil && st.calls > 0 && res.ServerCPU > 0 {
			// The kernel's part: sockets, and the page faults of memory a
			// server storing messages takes (see prefault.go).
			res.Notes = append(res.Notes, fmt.Sprintf("server kernel time: %.1f µs a %s call, %.0f%% of its CPU",
				float64(res.ServerSys.Microseconds())/float64(st.calls), v.sc.primary, 100*float64(res.ServerSys)/float64(res.ServerCPU)))
		}
	}
	if wl.finish != nil {
		res.Notes = append(res.Notes, wl.finish(ctx, stats)...)
	}
	if profiled != nil {
		res.Notes = append(res.Notes, profiled())
	}
	return res, ctx.Err()
}
