package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout"
)

// TestScenariosAgainstFanout runs the scenarios that need a real server
// (filter policies, HTTP delivery) briefly against fanout in-process.
func TestScenariosAgainstFanout(t *testing.T) {
	ctx := context.Background()
	srv := startFanout(t)
	cfg := &config{clients: 2, duration: 300 * time.Millisecond, warmup: 50 * time.Millisecond, size: 256,
		filtered: []int{12}, sinkFail: []float64{0, 0.5}, window: 32,
		scenarios: []string{"publish-filtered", "http-delivery", "http-delivery-signed"}}
	tgt := &target{name: srv.URL(), endpoint: srv.URL()}
	sdk := newSDKClient(srv.URL(), newSDKHTTPClient(cfg.clients))
	raw := &rawClient{hc: newHTTPClient(cfg.clients), endpoint: srv.URL()}
	var results []*result
	for i, v := range cfg.variants() {
		e := &env{cfg: cfg, tgt: tgt, kind: kindHTTP, dp: raw, ctl: sdk, fill: raw, size: v.size,
			prefix: "t" + string(rune('a'+i)) + "-" + queueSafe(v.name), param: v.param, sinkFail: v.fail}
		res, err := runOne(ctx, v, e)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		results = append(results, res)
		pub := res.Ops["publish"]
		if pub == nil || pub.calls == 0 || pub.errors > 0 {
			t.Fatalf("%s: publish %+v", v.name, pub)
		}
		notes := strings.Join(res.Notes, "\n")
		switch {
		case strings.HasPrefix(v.name, "publish-filtered"):
			// The sampled queue is one that matches: e2e samples arrive.
			if e2e := res.Ops["e2e"]; e2e == nil || e2e.lat.count() == 0 {
				t.Errorf("%s: no e2e samples: %v", v.name, res.Ops)
			}
		default:
			d, a := res.Ops["delivered"], res.Ops["attempt"]
			if d == nil || d.messages == 0 || d.lat.count() == 0 || a == nil || a.calls < d.messages {
				t.Fatalf("%s: delivered %+v attempt %+v\n%s", v.name, d, a, notes)
			}
			if v.fail == 0 && a.errors != 0 {
				t.Errorf("%s: %d failed attempts with a sink that never fails", v.name, a.errors)
			}
			if v.fail > 0 && a.errors == 0 {
				t.Errorf("%s: no failed attempts at --sink-fail %g", v.name, v.fail)
			}
			if !strings.Contains(notes, "attempts per message") || !strings.Contains(notes, "fanout's counts") ||
				strings.Contains(notes, "still undelivered") || strings.Contains(notes, "lost") {
				t.Errorf("%s: notes\n%s", v.name, notes)
			}
		}
	}
	// One target and round still gets the filtered/unfiltered comparison.
	costs := filterCosts(summarize(results, []string{srv.URL()}))
	if len(costs) != 1 || costs[0].Filtered != "publish-filtered/filtered=12/256B" || costs[0].CallsRatio <= 0 {
		t.Errorf("filter costs %+v", costs)
	}
}

// TestFillAgainstFanout runs the fill scenario with short windows against an
// in-process fanout serving its runtime metrics: every window has a rate,
// the depth grows, and the GC share is reported.
func TestFillAgainstFanout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts fanout")
	}
	ctx := context.Background()
	srv, err := fanout.Start(ctx, fanout.Options{NoRecreateWait: true, Pprof: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := &config{clients: 2, duration: time.Second, warmup: 20 * time.Millisecond, size: 64,
		fillFor: 600 * time.Millisecond, fillWin: 200 * time.Millisecond, scenarios: []string{"fill"},
		prefault: prefaultBlock}
	tgt := &target{name: srv.URL(), endpoint: srv.URL()}
	sdk := newSDKClient(srv.URL(), newSDKHTTPClient(cfg.clients))
	raw := &rawClient{hc: newHTTPClient(cfg.clients), endpoint: srv.URL()}
	v := cfg.variants()[0]
	e := &env{cfg: cfg, tgt: tgt, kind: kindHTTP, dp: raw, ctl: sdk, fill: raw, size: v.size, prefix: "fill"}
	res, err := runOne(ctx, v, e)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	// The GC share needs a collection in the run; a short one may have none,
	// which the runtime's counts (also read from fanout) then say.
	if n := strings.Count(notes, "fill window"); n < 2 || !strings.Contains(notes, "GC") && !strings.Contains(notes, ", 0 collections") ||
		!strings.Contains(notes, "last window / first") || strings.Contains(notes, "depth ?") {
		t.Fatalf("notes:\n%s", notes)
	}
}

// TestDrainHoldsBacklog runs drain against fanout in-process with a backlog
// a fast client empties at once: the refill keeps it there, so the timed
// phase lasts its whole duration, drains more than the backlog and ends
// with the backlog queued.
func TestDrainHoldsBacklog(t *testing.T) {
	ctx := context.Background()
	srv := startFanout(t)
	const queued = 60 // more than the clients hold in flight (2 × 10)
	cfg := &config{clients: 2, duration: 300 * time.Millisecond, warmup: 50 * time.Millisecond, size: 64,
		queued: queued, scenarios: []string{"drain"}}
	tgt := &target{name: "fanout", endpoint: srv.URL()}
	sdk := newSDKClient(srv.URL(), newSDKHTTPClient(cfg.clients))
	raw := &rawClient{hc: newHTTPClient(cfg.clients), endpoint: srv.URL()}
	for kind, dp := range map[string]dataPlane{kindSDK: sdk, kindHTTP: raw} {
		v := cfg.variants()[0]
		var res *result
		// The check needs more deletes than the backlog: on a loaded
		// machine 300 ms may not give them, so the phase grows.
		for round, d := range []time.Duration{300 * time.Millisecond, time.Second, 4 * time.Second} {
			cfg.duration = d
			e := &env{cfg: cfg, tgt: tgt, kind: kind, dp: dp, ctl: sdk, fill: raw, size: v.size, prefix: fmt.Sprintf("d%s%d", kind[:1], round)}
			var err error
			if res, err = runOne(ctx, v, e); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if del := res.Ops["delete"]; del == nil || del.messages > queued {
				break
			}
		}
		notes := strings.Join(res.Notes, "\n")
		if strings.Contains(notes, "no work left") {
			t.Errorf("%s: the queue emptied:\n%s", kind, notes)
		}
		del, ref := res.Ops["delete"], res.Ops["refill"]
		if res.Primary != "delete" || del == nil || ref == nil || del.messages <= queued || ref.messages != del.messages || del.errors+ref.errors > 0 {
			t.Errorf("%s: primary %s, delete %+v, refill %+v", kind, res.Primary, del, ref)
		}
		if !strings.Contains(notes, "queue depth at the end 60 (--queued 60)") {
			t.Errorf("%s: notes\n%s", kind, notes)
		}
	}
}

// startFanout starts fanout in-process for a test (not in -short), closed
// when the test ends.
func startFanout(t *testing.T) *fanout.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts fanout")
	}
	srv, err := fanout.Start(context.Background(), fanout.Options{NoRecreateWait: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestServerKernelTime: with a server whose process the tool knows (here
// the test's own, which serves fanout in process), a run reports the
// kernel's part of the server's CPU and a note of it a call.
func TestServerKernelTime(t *testing.T) {
	srv := startFanout(t)
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config{clients: 2, duration: 300 * time.Millisecond, warmup: 20 * time.Millisecond, size: 64, scenarios: []string{"send"}}
	tgt := &target{name: "fanout", endpoint: srv.URL(), cmd: &exec.Cmd{Process: self}}
	sdk := newSDKClient(srv.URL(), newSDKHTTPClient(cfg.clients))
	raw := &rawClient{hc: newHTTPClient(cfg.clients), endpoint: srv.URL()}
	v := cfg.variants()[0]
	e := &env{cfg: cfg, tgt: tgt, kind: kindHTTP, dp: raw, ctl: sdk, fill: raw, size: v.size, prefix: "sys"}
	res, err := runOne(context.Background(), v, e)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerCPU <= 0 || res.ServerSys < 0 || res.ServerSys > res.ServerCPU {
		t.Fatalf("server CPU %v, of it kernel %v", res.ServerCPU, res.ServerSys)
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "server kernel time: ") || !strings.Contains(notes, "a send call") {
		t.Fatalf("notes:\n%s", notes)
	}
}
