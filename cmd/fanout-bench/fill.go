package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The fill scenario: batch sends with no consumer, for --fill-duration, so a
// cost that grows with the backlog shows as a rate that falls from one
// 5-second window to the next. Each window's line gives its rate, the queue
// depth at its end, from fanout's runtime metrics the collector's share of
// the CPU fanout used in it, and fanout's user and kernel CPU time a
// message (from /proc): on a VM, memory the host has taken back costs
// several times more kernel time on first use (see prefault.go).

const defaultFillWindow = 5 * time.Second

// window is the fill scenario's window: 5 s, shorter only in tests.
func (cfg *config) fillWindow() time.Duration {
	if cfg.fillWin > 0 {
		return cfg.fillWin
	}
	return defaultFillWindow
}

// fillSample is one reading at a window boundary.
type fillSample struct {
	at    time.Duration
	depth int // -1 if unknown
	rt    map[string]float64
	// The server's user and system CPU time; -1 if unknown.
	user, sys time.Duration
}

func prepareFill(ctx context.Context, e *env) (*workload, error) {
	q, _, err := e.newQueue(ctx, "", false)
	if err != nil {
		return nil, err
	}
	es := batchOf(10, e.size)
	win := e.cfg.fillWindow()
	n := int(e.cfg.fillFor/win) + 1 // one more for calls ending after the last boundary
	sent := make([]atomic.Int64, n)
	throttled := make([]atomic.Int64, n) // sends refused at fanout's memory limit
	var mu sync.Mutex
	var samples []fillSample
	sample := func(ctx context.Context, at time.Duration) {
		s := fillSample{at: at, depth: -1, user: -1, sys: -1}
		if pid := e.tgt.pid(); pid > 0 {
			if user, sys, err := processTimes(pid, clockTick()); err == nil {
				s.user, s.sys = user, sys
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if d, err := e.ctl.queueDepth(cctx, q); err == nil {
			s.depth = d
		}
		s.rt, _ = runtimeMetrics(cctx, e.tgt.endpoint)
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
	}
	sampler := func(ctx context.Context, w *worker) {
		if !w.ph.timed {
			return
		}
		sample(ctx, 0)
		t := time.NewTicker(win)
		defer t.Stop()
		for k := 1; ; k++ {
			select {
			case <-w.ph.stop.Done():
				// The phase's end is the last boundary, unless the
				// ticker just took it.
				if at := time.Since(w.ph.start); at-time.Duration(k-1)*win > win/2 {
					sample(context.WithoutCancel(ctx), time.Duration(k)*win)
				}
				return
			case <-t.C:
				sample(context.WithoutCancel(ctx), time.Duration(k)*win)
			}
		}
	}
	return &workload{
		duration: e.cfg.fillFor,
		step: func(ctx context.Context, w *worker) error {
			err := w.do("send-batch", func() (int, error) { return len(es), e.dp.sendMessageBatch(ctx, q, es) })
			if w.ph.timed {
				if i := int(time.Since(w.ph.start) / win); i < n {
					switch {
					case err == nil:
						sent[i].Add(int64(len(es)))
					case throttledErr(err):
						throttled[i].Add(1)
					}
				}
			}
			return err
		},
		receivers: []func(ctx context.Context, w *worker){sampler},
		finish: func(ctx context.Context, _ statSet) []string {
			mu.Lock()
			defer mu.Unlock()
			rates := make([]float64, n)
			limitAt := -1
			for i := range rates {
				rates[i] = float64(sent[i].Load()) / win.Seconds()
				if limitAt < 0 && throttled[i].Load() > 0 {
					limitAt = i
				}
			}
			return fillNotes(rates, samples, limitAt)
		},
	}, nil
}

// throttledErr reports whether a send was refused because fanout is near
// its memory limit (RequestThrottled, README "Near the memory limit").
func throttledErr(err error) bool {
	return err != nil && strings.Contains(err.Error(), "RequestThrottled")
}

// fillNotes formats one line per full window, the last/first ratio and
// the trend fitted over all of them. limitAt is the first window in which
// fanout refused sends at its memory limit (-1: none): a queue that stops
// growing there measures the limit, not the cost of depth, so the ratio
// and the fit end with the window before it, and a note says so.
func fillNotes(rates []float64, samples []fillSample, limitAt int) []string {
	var notes []string
	full := 0
	for i := 1; i < len(samples); i++ {
		prev, cur := samples[i-1], samples[i]
		if i-1 >= len(rates) {
			break
		}
		full = i
		line := fmt.Sprintf("fill window %2d (%3.0f-%3.0fs): %8.0f msgs/s, depth %s",
			i, prev.at.Seconds(), cur.at.Seconds(), rates[i-1], depthText(cur.depth))
		if share, ok := gcShare(prev.rt, cur.rt); ok {
			line += fmt.Sprintf(", GC %4.1f%% of fanout's CPU", 100*share)
		}
		if user, sys, ok := cpuPerMsg(prev, cur, rates[i-1]); ok {
			line += fmt.Sprintf(", fanout's CPU a message: user %.2f µs, kernel %.2f µs", user, sys)
		}
		notes = append(notes, line)
	}
	if limitAt >= 0 && limitAt < full {
		at := "?"
		if limitAt < len(samples) {
			at = depthText(samples[limitAt].depth)
		}
		notes = append(notes, fmt.Sprintf("fill: fanout refused sends at its memory limit (RequestThrottled) from window %d on, the queue at depth %s; the ratio and the fit below are over the %d windows before it (a shorter --fill-duration, or a larger --memory-limit, keeps a fill under the limit)", limitAt+1, at, limitAt))
		full = limitAt
	}
	if full >= 2 && rates[0] > 0 {
		line := fmt.Sprintf("fill: last window / first = %.2f", rates[full-1]/rates[0])
		if share, ok := gcShare(samples[0].rt, samples[full].rt); ok {
			line += fmt.Sprintf("; GC %.1f%% of fanout's CPU over the run", 100*share)
		}
		if a, b := samples[0].rt, samples[full].rt; a != nil && b != nil {
			if t := b["/cpu/classes/total:cpu-seconds"] - a["/cpu/classes/total:cpu-seconds"]; t > 0 {
				line += fmt.Sprintf(" (%.1f%% of its GOMAXPROCS × wall time)", 100*(b["/cpu/classes/gc/total:cpu-seconds"]-a["/cpu/classes/gc/total:cpu-seconds"])/t)
			}
			line += fmt.Sprintf(", %0.f collections, live heap %.0f MiB at the end",
				b["/gc/cycles/total:gc-cycles"]-a["/gc/cycles/total:gc-cycles"], b["/gc/heap/live:bytes"]/(1<<20))
		}
		if ua, ka, okA := cpuPerMsg(samples[0], samples[1], rates[0]); okA {
			if ub, kb, okB := cpuPerMsg(samples[full-1], samples[full], rates[full-1]); okB {
				line += fmt.Sprintf("; fanout's CPU a message, first window then last: user %.2f and %.2f µs, kernel %.2f and %.2f µs", ua, ub, ka, kb)
			}
		}
		notes = append(notes, line)
	}
	if line, ok := fillTrend(rates[:full], samples[:full+1]); ok {
		notes = append(notes, line)
	}
	return notes
}

// fillTrend fits a straight line to the windows' rates against the queue
// depth in the middle of each window (least squares) and says what the
// line gives at the last window's depth over the first's. One window over
// another moves by a third on a small shared machine; the fit over every
// window is what shows whether the rate falls as the queue grows.
func fillTrend(rates []float64, samples []fillSample) (string, bool) {
	var xs, ys []float64
	for i, r := range rates {
		if i+1 >= len(samples) || samples[i].depth < 0 || samples[i+1].depth < 0 {
			return "", false
		}
		xs = append(xs, float64(samples[i].depth+samples[i+1].depth)/2)
		ys = append(ys, r)
	}
	if len(xs) < 3 {
		return "", false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return "", false
	}
	slope := sxy / sxx
	first, last := xs[0], xs[len(xs)-1]
	at := func(x float64) float64 { return my + slope*(x-mx) }
	if at(first) <= 0 {
		return "", false
	}
	return fmt.Sprintf("fill trend (least squares over %d windows): %.0f msgs/s at depth %.0f, %.0f at depth %.0f: fitted last / first = %.2f, %+.0f msgs/s per million queued",
		len(xs), at(first), first, at(last), last, at(last)/at(first), slope*1e6), true
}

// cpuPerMsg is the server's user and system CPU time between two readings
// over the messages sent between them at rate, in microseconds.
func cpuPerMsg(a, b fillSample, rate float64) (user, sys float64, ok bool) {
	n := rate * (b.at - a.at).Seconds()
	if a.sys < 0 || b.sys < 0 || a.user < 0 || b.user < 0 || n <= 0 {
		return 0, 0, false
	}
	return float64((b.user - a.user).Microseconds()) / n, float64((b.sys - a.sys).Microseconds()) / n, true
}

func depthText(d int) string {
	if d < 0 {
		return "?"
	}
	return fmt.Sprint(d)
}

// gcShare is the collector's share of the CPU the process used between two
// readings: GC time over total minus idle time.
func gcShare(a, b map[string]float64) (float64, bool) {
	if a == nil || b == nil {
		return 0, false
	}
	gc := b["/cpu/classes/gc/total:cpu-seconds"] - a["/cpu/classes/gc/total:cpu-seconds"]
	used := (b["/cpu/classes/total:cpu-seconds"] - b["/cpu/classes/idle:cpu-seconds"]) -
		(a["/cpu/classes/total:cpu-seconds"] - a["/cpu/classes/idle:cpu-seconds"])
	if used <= 0 {
		return 0, false
	}
	return gc / used, true
}

// runtimeMetrics reads fanout's GET /_fanout/debug/runtime (served with
// --pprof); servers without it (the null server) give nil.
func runtimeMetrics(ctx context.Context, endpoint string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+"/_fanout/debug/runtime", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("runtime metrics: HTTP %d", resp.StatusCode)
	}
	var out map[string]float64
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
