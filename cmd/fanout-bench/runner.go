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
	Slices    int // timed slices, alternating with other targets' (runSliced); 1 if not
}

// runOne prepares, warms up and times one run, then deletes what it created.
func runOne(ctx context.Context, v variant, e *env) (*result, error) {
	a, err := arm(ctx, v, e)
	defer e.cleanup()
	if err != nil {
		return nil, err
	}
	timed := a.timed()
	var profiled func() string
	if e.cfg.cpuProfile != "" && a.pid != 0 {
		profiled = startCPUProfile(ctx, e.cfg.cpuProfile, e.tgt, v.name, e.kind, timed)
	}
	a.slice(ctx, timed)
	return a.result(ctx, profiled), ctx.Err()
}

// runRound runs vs[i] on envs[i] for every i: in alternating slices when
// sc allows (runSliced), else each whole, one after the other, until an
// interrupt. Results and errors are in the order of envs.
func runRound(ctx context.Context, cfg *config, sc *scenario, vs []variant, envs []*env) ([]*result, []error) {
	if n := cfg.slicesFor(sc, len(envs)); n > 1 {
		return runSliced(ctx, vs, envs, n)
	}
	results := make([]*result, len(envs))
	errs := make([]error, len(envs))
	for i, e := range envs {
		if errs[i] = ctx.Err(); errs[i] == nil {
			results[i], errs[i] = runOne(ctx, vs[i], e)
		}
	}
	return results, errs
}

// runSliced runs vs[i] on envs[i] for every i at once: each is prepared and
// warmed up, then their timed phases alternate in n slices each, in the
// order A B B A A B …, so that a machine slowing down or speeding up during
// the round weighs on every run alike. The results are in the order of
// envs; a run whose set-up failed has a nil result and its error.
func runSliced(ctx context.Context, vs []variant, envs []*env, n int) ([]*result, []error) {
	results := make([]*result, len(envs))
	errs := make([]error, len(envs))
	var live []int // indexes of the runs set up
	runs := make([]*armed, len(envs))
	for i, e := range envs {
		defer e.cleanup()
		if runs[i], errs[i] = arm(ctx, vs[i], e); errs[i] == nil {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return results, errs
	}
	d := runs[live[0]].timed() / time.Duration(n)
	for s := range n {
		for k := range live {
			if s%2 == 1 {
				k = len(live) - 1 - k
			}
			runs[live[k]].slice(ctx, d)
		}
	}
	for _, i := range live {
		results[i], errs[i] = runs[i].result(ctx, nil), ctx.Err()
	}
	return results, errs
}

// cleanup deletes what a run created; it runs even when ctx was
// interrupted.
func (e *env) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		if err := e.cleanups[i](ctx); err != nil {
			fmt.Fprintf(os.Stderr, "cleanup: %v\n", err)
		}
	}
	e.cleanups = nil
}

// armed is one target's run, prepared and warmed up; its timed phase may
// come in slices, whose figures add up here.
type armed struct {
	v   variant
	e   *env
	wl  *workload
	pid int // the server's process, 0 if unknown

	stats          statSet
	elapsed        time.Duration // sum of the slices' own elapsed times
	timedFor       time.Duration // sum of the slices' nominal lengths
	cpu, sys       time.Duration // server CPU and its kernel part; -1 if unknown
	client         time.Duration // this tool's CPU
	slices, sliceN int           // slices timed; of which the server's CPU was read
}

// arm prepares the run and warms it up.
func arm(ctx context.Context, v variant, e *env) (*armed, error) {
	a := &armed{v: v, e: e, pid: e.tgt.pid(), stats: statSet{}}
	if a.pid != 0 {
		e.rssBefore, _ = processRSS(a.pid)
	}
	wl, err := v.sc.prepare(ctx, e)
	if err != nil {
		return nil, err
	}
	a.wl = wl
	if a.pid != 0 {
		e.rssAfter, _ = processRSS(a.pid)
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
	return a, ctx.Err()
}

// timed is the run's whole timed phase.
func (a *armed) timed() time.Duration {
	if a.wl.duration > 0 {
		return a.wl.duration
	}
	return a.e.cfg.duration
}

// slice times the workload for d and adds what it measured.
func (a *armed) slice(ctx context.Context, d time.Duration) {
	if ctx.Err() != nil {
		return
	}
	var cpu0, sys0 time.Duration = -1, -1
	if a.pid != 0 {
		if u, s, err := processTimes(a.pid, clockTick()); err == nil {
			cpu0, sys0 = u+s, s
		}
	}
	self0 := selfCPU()
	stats, elapsed := runPhase(ctx, a.wl, a.e.cfg.clients, d, true)
	a.client += selfCPU() - self0
	a.stats.merge(stats)
	a.elapsed += elapsed
	a.timedFor += d
	a.slices++
	if cpu0 >= 0 {
		if u, s, err := processTimes(a.pid, clockTick()); err == nil {
			a.cpu += u + s - cpu0
			a.sys += s - sys0
			a.sliceN++
		}
	}
}

// result gives the run's figures, once its slices are timed; profiled, if
// set, waits for the CPU profile taken meanwhile.
func (a *armed) result(ctx context.Context, profiled func() string) *result {
	e := a.e
	res := &result{
		Scenario:  a.v.name,
		Client:    e.kind,
		Target:    e.tgt.name,
		Primary:   a.v.sc.primary,
		Elapsed:   a.elapsed,
		ServerCPU: -1,
		ServerSys: -1,
		ClientCPU: a.client,
		Ops:       a.stats,
		Notes:     e.notes,
		RSSBefore: e.rssBefore,
		RSSAfter:  e.rssAfter,
		Prefilled: e.prefilled,
		Slices:    a.slices,
	}
	if a.elapsed < a.timedFor*9/10 {
		res.Notes = append(res.Notes, fmt.Sprintf("timed phase ended after %.2fs: no work left", a.elapsed.Seconds()))
	}
	if a.sliceN == a.slices && a.slices > 0 {
		res.ServerCPU, res.ServerSys = a.cpu, a.sys
		if st := a.stats[a.v.sc.primary]; st != nil && st.calls > 0 && res.ServerCPU > 0 {
			// The kernel's part: sockets, and the page faults of memory a
			// server storing messages takes (see prefault.go).
			res.Notes = append(res.Notes, fmt.Sprintf("server kernel time: %.1f µs a %s call, %.0f%% of its CPU",
				float64(res.ServerSys.Microseconds())/float64(st.calls), a.v.sc.primary, 100*float64(res.ServerSys)/float64(res.ServerCPU)))
		}
	}
	if a.wl.finish != nil {
		res.Notes = append(res.Notes, a.wl.finish(ctx, a.stats)...)
	}
	if profiled != nil {
		res.Notes = append(res.Notes, profiled())
	}
	return res
}
