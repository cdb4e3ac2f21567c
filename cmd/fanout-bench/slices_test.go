package main

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunSlicedAlternates checks that runSliced sets every target up before
// timing any, times them in slices in the order A B B A A B …, and adds the
// slices up into one result each.
func TestRunSlicedAlternates(t *testing.T) {
	var mu sync.Mutex
	var order []string // "prepare X", or a target's name when a slice starts
	seen := map[*phase]bool{}
	log := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	sc := &scenario{name: "fake", primary: "op", prepare: func(_ context.Context, e *env) (*workload, error) {
		log("prepare " + e.tgt.name)
		return &workload{step: func(_ context.Context, w *worker) error {
			if w.ph.timed {
				mu.Lock()
				if !seen[w.ph] {
					seen[w.ph] = true
					order = append(order, e.tgt.name)
				}
				mu.Unlock()
			}
			return w.do("op", func() (int, error) { time.Sleep(time.Millisecond); return 2, nil })
		}}, nil
	}}
	cfg := &config{clients: 2, duration: 400 * time.Millisecond, warmup: 20 * time.Millisecond, slices: 4}
	var envs []*env
	for _, name := range []string{"a", "b"} {
		envs = append(envs, &env{cfg: cfg, tgt: &target{name: name}, kind: kindHTTP})
	}
	rs, errs := runSliced(context.Background(), slices.Repeat([]variant{{name: "fake", sc: sc}}, 2), envs, 4)
	if got, want := strings.Join(order, " "), "prepare a prepare b a b b a a b b a"; got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	for i, res := range rs {
		if errs[i] != nil || res == nil {
			t.Fatalf("%s: %v", envs[i].tgt.name, errs[i])
		}
		op := res.Ops["op"]
		if res.Target != envs[i].tgt.name || res.Slices != 4 || op == nil || op.calls == 0 || op.messages != 2*op.calls {
			t.Errorf("%s: %+v %+v", envs[i].tgt.name, res, op)
		}
		// Four slices of 100ms each, every one lasting until its last call.
		if res.Elapsed < cfg.duration {
			t.Errorf("%s: elapsed %v, under the %v timed", res.Target, res.Elapsed, cfg.duration)
		}
		if res.ServerCPU != -1 {
			t.Errorf("%s: server CPU %v of a target without a process", res.Target, res.ServerCPU)
		}
	}
}

// TestRunSlicedSetUpFailure: a target whose set-up fails gets its error and
// the others still run.
func TestRunSlicedSetUpFailure(t *testing.T) {
	sc := &scenario{name: "fake", primary: "op", prepare: func(_ context.Context, e *env) (*workload, error) {
		if e.tgt.name == "bad" {
			return nil, context.DeadlineExceeded
		}
		return &workload{step: func(_ context.Context, w *worker) error {
			return w.do("op", func() (int, error) { time.Sleep(time.Millisecond); return 1, nil })
		}}, nil
	}}
	cfg := &config{clients: 1, duration: 200 * time.Millisecond, slices: 2}
	envs := []*env{{cfg: cfg, tgt: &target{name: "bad"}}, {cfg: cfg, tgt: &target{name: "good"}}}
	rs, errs := runSliced(context.Background(), slices.Repeat([]variant{{name: "fake", sc: sc}}, 2), envs, 2)
	if errs[0] == nil || rs[0] != nil {
		t.Errorf("bad: %v %v", rs[0], errs[0])
	}
	if errs[1] != nil || rs[1] == nil || rs[1].Slices != 2 || rs[1].Ops["op"].calls == 0 {
		t.Errorf("good: %+v %v", rs[1], errs[1])
	}
}

func TestSliceCount(t *testing.T) {
	var serve string
	cfg, err := parseFlags([]string{"--target", "both"}, &serve)
	if err != nil {
		t.Fatal(err)
	}
	send, fill := findScenario("send"), findScenario("fill")
	if n := cfg.slicesFor(send, 2); n != defaultSlices {
		t.Errorf("default: %d slices", n)
	}
	if n := cfg.slicesFor(send, 1); n != 1 {
		t.Errorf("one target: %d slices", n)
	}
	if n := cfg.slicesFor(fill, 2); n != 1 {
		t.Errorf("fill: %d slices", n)
	}
	if cfg, _ := parseFlags([]string{"--target", "both", "--cpu-profile", t.TempDir()}, &serve); cfg.slicesFor(send, 2) != 1 {
		t.Error("sliced with --cpu-profile")
	}
	// A short --duration gets fewer slices by default, and refuses too many.
	if cfg, _ := parseFlags([]string{"--target", "both", "--duration", "300ms"}, &serve); cfg.slicesFor(send, 2) != 3 {
		t.Errorf("300ms: %d slices", cfg.slicesFor(send, 2))
	}
	for _, bad := range [][]string{{"--slices", "0"}, {"--slices", "1001"}, {"--slices", "51", "--duration", "5s"}} {
		if _, err := parseFlags(bad, &serve); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if cfg, err := parseFlags([]string{"--target", "both", "--slices", "1"}, &serve); err != nil || cfg.slicesFor(send, 2) != 1 {
		t.Errorf("--slices 1: %v", err)
	}
}

// TestFeedClaims: receivers never ask for more messages, together, than
// were sent, so a server that answers every receive in full (the null
// server) sees no more receive traffic than a queue would.
func TestFeedClaims(t *testing.T) {
	fs := newFeeds(1)
	f := fs[0]
	produced(fs, 25)
	for _, want := range []int64{10, 10, 5, 0} {
		if got := f.claim(10); got != want {
			t.Fatalf("claim: %d, want %d", got, want)
		}
	}
	f.unclaim(3) // a receive brought 3 fewer than it asked for
	if got := f.claim(10); got != 3 {
		t.Fatalf("claim after unclaim: %d", got)
	}

	fs = newFeeds(1)
	f = fs[0]
	var total atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for total.Load() < 10_000 {
				total.Add(f.claim(10))
			}
		})
	}
	for range 1000 {
		produced(fs, 10)
	}
	wg.Wait()
	if total.Load() != 10_000 || f.claim(10) != 0 {
		t.Errorf("claimed %d of 10000 sent", total.Load())
	}
}

// TestRunSlicedInterrupted: an interrupt leaves no run with neither a
// result nor an error.
func TestRunSlicedInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sc := &scenario{name: "fake", primary: "op", prepare: func(_ context.Context, e *env) (*workload, error) {
		return &workload{step: func(_ context.Context, w *worker) error {
			if w.ph.timed {
				cancel()
			}
			return w.do("op", func() (int, error) { time.Sleep(time.Millisecond); return 1, nil })
		}}, nil
	}}
	cfg := &config{clients: 1, duration: 400 * time.Millisecond, slices: 4}
	envs := []*env{{cfg: cfg, tgt: &target{name: "a"}}, {cfg: cfg, tgt: &target{name: "b"}}}
	rs, errs := runSliced(ctx, slices.Repeat([]variant{{name: "fake", sc: sc}}, 2), envs, 4)
	for i := range envs {
		if errs[i] == nil {
			t.Errorf("%s: no error after an interrupt (result %v)", envs[i].tgt.name, rs[i])
		}
	}
}
