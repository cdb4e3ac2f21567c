package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanout/fanout"
)

func TestSplitScaleName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, base, side, size string }{
		{"queues-many/one/64B", "queues-many", "one", "64B"},
		{"queues-many/queues=100000/1024B", "queues-many", "queues=100000", "1024B"},
		{"accounts/publish/accounts=100/64B", "accounts/publish", "accounts=100", "64B"},
		{scaleName("accounts", "send", "one", 64), "accounts/send", "one", "64B"},
	} {
		base, side, size, ok := splitScaleName(c.name)
		if !ok || base != c.base || side != c.side || size != c.size {
			t.Errorf("splitScaleName(%q) = %q %q %q %v", c.name, base, side, size, ok)
		}
	}
	for _, name := range []string{"publish/subs=3/64B", "send/64B", "queues-many", "queues-many/one"} {
		if _, _, _, ok := splitScaleName(name); ok {
			t.Errorf("splitScaleName(%q) took a name that is not a scale variant's", name)
		}
	}
}

func TestScaleCosts(t *testing.T) {
	t.Parallel()
	results := []*result{
		fakeResult("topics-many/one/64B", "fanout", "http", 1000, time.Millisecond, 100*time.Millisecond),
		fakeResult("topics-many/topics=10000/64B", "fanout", "http", 960, 2*time.Millisecond, 110*time.Millisecond),
		fakeResult("topics-many/one/1024B", "fanout", "http", 1000, time.Millisecond, 100*time.Millisecond),
		fakeResult("topics-many/topics=10000/1024B", "fanout", "http", 900, time.Millisecond, 100*time.Millisecond),
		fakeResult("publish/subs=3/64B", "fanout", "http", 900, time.Millisecond, 100*time.Millisecond),
	}
	wake := func(r *result, lat time.Duration) {
		st := &opStats{messages: 100}
		for range 100 {
			st.lat.record(lat)
		}
		r.Ops["wake"] = st
	}
	lp1 := fakeResult("long-polls/one/64B", "fanout", "http", 500, time.Millisecond, time.Second)
	lp2 := fakeResult("long-polls/polls=10000/64B", "fanout", "http", 500, time.Millisecond, time.Second)
	lp1.Primary, lp2.Primary = "send", "send"
	wake(lp1, time.Millisecond)
	wake(lp2, 7*time.Millisecond)
	results = append(results, lp1, lp2)
	costs := scaleCosts(summarize(results, []string{"fanout"}))
	if len(costs) != 3 { // two topics-many sizes; long-polls' wake
		t.Fatalf("costs %+v", costs)
	}
	c := costs[0]
	if c.Scenario != "topics-many/64B" || c.Side != "topics=10000" || c.Op != "publish" ||
		c.CallsRatio < 0.95 || c.CallsRatio > 0.97 || c.SrvRatio < 1.1 || c.SrvRatio > 1.2 {
		t.Errorf("64B cost %+v", c)
	}
	// The --base-bin build's rows pair with its own baseline.
	base := append(results[:0:0], results...)
	base = append(base,
		fakeResult("topics-many/one/64B", "fanout-base", "http", 1000, time.Millisecond, 100*time.Millisecond),
		fakeResult("topics-many/topics=10000/64B", "fanout-base", "http", 800, 2*time.Millisecond, 150*time.Millisecond))
	both := scaleCosts(summarize(base, []string{"fanout", "fanout-base"}))
	if len(both) != 4 || both[1].Target != "fanout-base" || both[1].CallsRatio < 0.79 || both[1].CallsRatio > 0.81 {
		t.Errorf("with fanout-base: %+v", both)
	}
	var out bytes.Buffer
	printScaleCosts(&out, costs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "0.96x (target within 5%: met)") ||
		!strings.Contains(lines[2], "0.90x (target within 5%: NOT met)") ||
		!strings.Contains(lines[3], "wake") || !strings.Contains(lines[3], "target p99 ≤ 5ms: NOT met") {
		t.Errorf("printed:\n%s", out.String())
	}
}

func TestGrowthPerUnit(t *testing.T) {
	t.Parallel()
	a := memSnap{rssKiB: 10 * 1024, heapB: 1 << 20}
	b := memSnap{rssKiB: 30 * 1024, heapB: 11 << 20}
	got := growth(a, b, 1000, "queue")
	want := "VmRSS +20.0 MiB (20.5 KiB per queue), live heap +10.0 MiB (10.2 KiB per queue)"
	if got != want {
		t.Errorf("growth = %q, want %q", got, want)
	}
	a.heapErr = errors.New("no pprof")
	if got := growth(a, b, 10240, "poll"); got != "VmRSS +20.0 MiB (2048 B per poll)" {
		t.Errorf("growth without heap = %q", got)
	}
}

func TestQueueArnOf(t *testing.T) {
	t.Parallel()
	arn, err := queueArnOf("http://127.0.0.1:4566/100000000007/fb-x-q", "us-east-1")
	if err != nil || arn != "arn:aws:sqs:us-east-1:100000000007:fb-x-q" {
		t.Errorf("queueArnOf = %q, %v", arn, err)
	}
	if _, err := queueArnOf("http://127.0.0.1:4566/q", "us-east-1"); err == nil {
		t.Error("a URL without an account gave an ARN")
	}
}

func TestAccountKeysSignCalls(t *testing.T) {
	t.Parallel()
	if k := accountKey(100_000_000_000, 7); k != "100000000007" {
		t.Errorf("accountKey = %q", k)
	}
	if k := accountKey(0, 0); k != "000000000000" {
		t.Errorf("accountKey of the default = %q", k)
	}
	c := (&rawClient{endpoint: "http://127.0.0.1:1"}).withKey("100000000007")
	if !strings.Contains(c.sqsAuth[0], "Credential=100000000007/20260101/us-east-1/sqs/") ||
		!strings.Contains(c.snsAuth[0], "Credential=100000000007/20260101/us-east-1/sns/") {
		t.Errorf("headers %q %q", c.sqsAuth, c.snsAuth)
	}
}

func TestParallelStopsAtFirstError(t *testing.T) {
	t.Parallel()
	var ran atomic.Int64
	boom := errors.New("boom")
	err := parallel(context.Background(), 100000, 4, func(i int) error {
		ran.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran.Load() > 1000 {
		t.Errorf("err %v after %d calls", err, ran.Load())
	}
	ran.Store(0)
	if err := parallel(context.Background(), 50, 8, func(int) error { ran.Add(1); return nil }); err != nil || ran.Load() != 50 {
		t.Errorf("err %v after %d of 50 calls", err, ran.Load())
	}
}

func TestPollSetSamplesOnlyArmedPhase(t *testing.T) {
	t.Parallel()
	ps := &pollSet{}
	ph := &phase{start: time.Now()}
	msg := func(at time.Time) message {
		return message{body: "ts=" + strconv.FormatInt(at.UnixNano(), 10) + ";x"}
	}
	ps.record(time.Now(), []message{msg(time.Now())}) // not armed: dropped
	ps.arm(ph)
	ps.record(ph.start.Add(3*time.Millisecond), []message{msg(ph.start.Add(time.Millisecond)), msg(ph.start.Add(-time.Second))})
	ps.arm(ph) // the same phase: keeps its samples
	st := ps.take()
	if st.messages != 1 || st.lat.count() != 1 || st.lat.percentile(0.5) < time.Millisecond || st.lat.percentile(0.5) > 3*time.Millisecond {
		t.Errorf("wake stats %+v", st)
	}
	ps.record(time.Now(), []message{msg(time.Now())}) // taken: dropped
	if st := ps.take(); st.messages != 0 {
		t.Errorf("sampled after take: %+v", st)
	}
}

// TestScaleScenariosAgainstFanout sets up both sides of each scale
// scenario, small, on in-process fanouts, and runs each side once.
func TestScaleScenariosAgainstFanout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts fanout")
	}
	ctx := context.Background()
	cfg := &config{clients: 2, duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, sizes: []int{64},
		queues: 50, topics: 20, polls: 40, pollQueues: 10, pollRate: 200, pollWait: 1, accounts: 3}
	for _, name := range []string{"queues-many", "topics-many", "accounts", "long-polls"} {
		sc := findScenario(name)
		for _, side := range sc.scale.sides(cfg) {
			srv, err := fanout.Start(ctx, fanout.Options{Pprof: true})
			if err != nil {
				t.Fatal(err)
			}
			se := newScaleEnv(cfg, &target{name: "fanout", endpoint: srv.URL()}, "t-")
			if err := sc.scale.setup(ctx, se, side); err != nil {
				t.Fatalf("%s/%s set-up: %v", name, side.name, err)
			}
			if name == "queues-many" {
				// Each queue holds its first message before the timed sends.
				for _, q := range []string{side.queues[0], side.queues[len(side.queues)-1]} {
					if d, err := se.ctl.queueDepth(ctx, q); err != nil || d != 1 {
						t.Fatalf("%s/%s: %s holds %d after the set-up: %v", name, side.name, q, d, err)
					}
				}
			}
			modes := sc.scale.modes
			if modes == nil {
				modes = []string{""}
			}
			for _, mode := range modes {
				scv := *sc
				if mode != "" {
					scv.primary = mode
				}
				v := variant{name: scaleName(name, mode, side.name, 64), sc: &scv, param: side.count, size: 64}
				e := &env{cfg: cfg, tgt: se.tgt, kind: kindHTTP, dp: se.dp[kindHTTP], ctl: se.ctl, fill: se.raw,
					param: side.count, size: 64, side: side, mode: mode}
				res, err := runOne(ctx, v, e)
				if err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				st := res.Ops[scv.primary]
				if st == nil || st.calls == 0 || st.errors > 0 {
					t.Errorf("%s: %s %+v", v.name, scv.primary, st)
				}
				if name == "long-polls" {
					if w := res.Ops["wake"]; w == nil || w.messages == 0 || w.errors > 0 {
						t.Errorf("%s: wake %+v, notes %q", v.name, w, res.Notes)
					}
				}
			}
			if side.name != "one" && len(side.notes) == 0 {
				t.Errorf("%s/%s: no set-up figures", name, side.name)
			}
			if side.polls != nil {
				side.polls.stop()
			}
			se.close()
			srv.Close()
		}
	}
}
