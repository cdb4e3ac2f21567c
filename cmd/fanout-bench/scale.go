package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The scale scenarios measure cost in counts rather than in messages
// (issue 15: 100,000 queues, 10,000 topics, 10,000 waiting long polls;
// issue 13: 100 accounts). Each compares a baseline side, named "one" (one
// queue, topic or account; the same polls per queue on one queue), with a
// scaled side. Each side runs on a fresh fanout of its own, started for the
// scenario and set up once (set-up reports creation time and memory per
// queue, topic, account or poll); then the runs alternate between the two,
// A B A B, so both see the same noise of a shared machine, and the summary
// gives scaled/one ratios of the medians.

// scaleSpec is what makes a scenario a scale scenario.
type scaleSpec struct {
	// sides returns the baseline side ("one") and the scaled side.
	sides func(cfg *config) [2]*scaleSide
	// modes, when set, are primary ops run in turn, each its own variant
	// (accounts: send and publish).
	modes    []string
	httpOnly bool
	// setup creates a side's resources once, on the side's own fanout.
	setup func(ctx context.Context, se *scaleEnv, side *scaleSide) error
}

// scaleSide is one side of a scale scenario and what its set-up made.
type scaleSide struct {
	name   string // "one", or e.g. "queues=100000"
	count  int
	queues []string // queue URLs
	topics []string // topic ARNs
	// dps, when set, are per client kind one client per queues[i] and
	// topics[i], signed with that account's key (accounts).
	dps   map[string][]dataPlane
	polls *pollSet
	notes []string // set-up figures
}

// scaleEnv is one side's fanout and the clients that set it up and load it.
type scaleEnv struct {
	cfg    *config
	tgt    *target
	prefix string
	raw    *rawClient // untimed control plane
	ctl    *sdkClient
	dp     map[string]dataPlane // client under test, by kind
	hc     map[string]*http.Client
}

func newScaleEnv(cfg *config, t *target, prefix string) *scaleEnv {
	se := &scaleEnv{cfg: cfg, tgt: t, prefix: prefix,
		raw: &rawClient{hc: newHTTPClient(cfg.clients), endpoint: t.endpoint},
		ctl: newSDKClient(t.endpoint, newSDKHTTPClient(2)),
		dp:  map[string]dataPlane{}, hc: map[string]*http.Client{}}
	se.hc[kindHTTP] = newHTTPClient(cfg.clients)
	se.hc[kindSDK] = newSDKHTTPClient(cfg.clients)
	se.dp[kindHTTP] = &rawClient{hc: se.hc[kindHTTP], endpoint: t.endpoint}
	se.dp[kindSDK] = newSDKClient(t.endpoint, se.hc[kindSDK])
	return se
}

func (se *scaleEnv) close() {
	for _, hc := range se.hc {
		hc.CloseIdleConnections()
	}
	se.raw.hc.CloseIdleConnections()
}

// isScale reports whether a scenario name is a scale scenario.
func isScale(name string) bool {
	sc := findScenario(name)
	return sc != nil && sc.scale != nil
}

// scaleBuild is one fanout build a scale scenario runs on: target fanout,
// and fanout-base (the --base-bin build) when --target names it, so a
// change is measured against the build before in the same run.
type scaleBuild struct{ name, bin string }

func scaleBuilds(cfg *config, bin string) []scaleBuild {
	builds := []scaleBuild{{"fanout", bin}}
	if slices.Contains(cfg.targets, "fanout-base") {
		builds = append(builds, scaleBuild{"fanout-base", cfg.baseBin})
	}
	return builds
}

// runScale runs one scale scenario: both sides' fanouts and set-ups (per
// build), then every body size, mode, client kind and round, A B A B.
func runScale(ctx context.Context, cfg *config, bin string, sc *scenario, runID string, report io.Writer) ([]*result, error) {
	spec := sc.scale
	builds := scaleBuilds(cfg, bin)
	sides := make([][2]*scaleSide, len(builds))
	envs := make([][2]*scaleEnv, len(builds))
	defer func() {
		for b := range envs {
			for i, se := range envs[b] {
				if se == nil {
					continue
				}
				if sides[b][i].polls != nil {
					sides[b][i].polls.stop()
				}
				se.close()
				se.tgt.stop()
			}
		}
	}()
	for b, build := range builds {
		sides[b] = spec.sides(cfg)
		for i, side := range sides[b] {
			t, err := startProcess(ctx, build.name, build.bin, "--log-level", "error", "--pprof")
			if err != nil {
				return nil, err
			}
			envs[b][i] = newScaleEnv(cfg, t, fmt.Sprintf("fb-%s-%s-", runID, i2s(i)))
			fmt.Fprintf(os.Stderr, "%s/%s: %s at %s (pid %d), setting up\n", sc.name, side.name, build.name, t.endpoint, t.pid())
			start := time.Now()
			if err := spec.setup(ctx, envs[b][i], side); err != nil {
				return nil, fmt.Errorf("%s/%s set-up: %w", sc.name, side.name, err)
			}
			fmt.Fprintf(os.Stderr, "%s/%s: set up in %.1fs\n", sc.name, side.name, time.Since(start).Seconds())
			for _, n := range side.notes {
				fmt.Fprintf(os.Stderr, "  %s\n", n)
			}
		}
	}
	kinds := cfg.clientKinds
	if spec.httpOnly {
		kinds = []string{kindHTTP}
	}
	modes := spec.modes
	if len(modes) == 0 {
		modes = []string{""}
	}
	var results []*result
	first := make([][2]bool, len(builds))
	for b := range first {
		first[b] = [2]bool{true, true}
	}
	seq := 0
	for _, size := range cfg.sizes {
		for _, mode := range modes {
			scv := sc
			if mode != "" {
				c := *sc
				c.primary, c.guard = mode, mode
				scv = &c
			}
			for _, kind := range kinds {
				for round := 1; round <= cfg.rounds; round++ {
					var vs []variant
					var es []*env
					var at [][2]int // each run's build and side
					for i := range 2 {
						for b := range builds {
							side, se := sides[b][i], envs[b][i]
							if !se.tgt.alive() {
								return results, fmt.Errorf("%s/%s: %s exited unexpectedly", sc.name, side.name, se.tgt.name)
							}
							seq++
							vs = append(vs, variant{name: scaleName(sc.name, mode, side.name, size), sc: scv, param: side.count, size: size})
							es = append(es, &env{cfg: cfg, tgt: se.tgt, kind: kind, dp: se.dp[kind], ctl: se.ctl, fill: se.raw,
								prefix: se.prefix + "r" + strconv.Itoa(seq), param: side.count, size: size, side: side, mode: mode})
							at = append(at, [2]int{b, i})
						}
					}
					rs, errs := runRound(ctx, cfg, scv, vs, es)
					if ctx.Err() != nil {
						return results, ctx.Err()
					}
					for k, res := range rs {
						b, i := at[k][0], at[k][1]
						if errs[k] != nil {
							fmt.Fprintf(report, "%s %s %s: %v\n", es[k].tgt.name, kind, vs[k].name, errs[k])
							continue
						}
						if first[b][i] {
							res.Notes = append(append([]string{}, sides[b][i].notes...), res.Notes...)
							first[b][i] = false
						}
						res.Round = round
						results = append(results, res)
						printRun(report, res)
					}
				}
			}
		}
	}
	return results, nil
}

func i2s(i int) string { return string(rune('a' + i)) }

// scaleName is a scale variant's name: scenario[/mode]/side/<size>B.
func scaleName(scenario, mode, side string, size int) string {
	if mode != "" {
		scenario += "/" + mode
	}
	return fmt.Sprintf("%s/%s/%dB", scenario, side, size)
}

// splitScaleName takes a scale variant's name apart; ok is false for the
// name of any other variant.
func splitScaleName(name string) (base, side, size string, ok bool) {
	rest, size := cutSize(name)
	i := strings.LastIndexByte(rest, '/')
	if size == "" || i < 0 {
		return "", "", "", false
	}
	base, side = rest[:i], rest[i+1:]
	if !isScale(strings.SplitN(base, "/", 2)[0]) {
		return "", "", "", false
	}
	return base, side, size, true
}

// memSnap is a server's memory at one moment.
type memSnap struct {
	rssKiB  int64
	heapB   int64
	heapErr error
}

// snapMem reads the server's VmRSS and, after a GC, its live heap.
func snapMem(ctx context.Context, t *target) memSnap {
	var m memSnap
	m.rssKiB, _ = processRSS(t.pid())
	m.heapB, m.heapErr = liveHeap(ctx, t.endpoint)
	return m
}

// growth describes the memory added between a and b, per one of n units.
func growth(a, b memSnap, n int, unit string) string {
	s := fmt.Sprintf("VmRSS %+.1f MiB (%s per %s)", float64(b.rssKiB-a.rssKiB)/1024, bytesText(float64(b.rssKiB-a.rssKiB)*1024/float64(n)), unit)
	if a.heapErr == nil && b.heapErr == nil {
		s += fmt.Sprintf(", live heap %+.1f MiB (%s per %s)", float64(b.heapB-a.heapB)/(1<<20), bytesText(float64(b.heapB-a.heapB)/float64(n)), unit)
	}
	return s
}

// bytesText formats a byte count per unit: B below 10 KiB, else KiB.
func bytesText(v float64) string {
	if v >= 10*1024 || v <= -10*1024 {
		return fmt.Sprintf("%.1f KiB", v/1024)
	}
	return fmt.Sprintf("%.0f B", v)
}

// createQueues creates n queues named prefix+i from --clients goroutines.
func createQueues(ctx context.Context, se *scaleEnv, c *rawClient, prefix string, n int) ([]string, error) {
	urls := make([]string, n)
	err := parallel(ctx, n, se.cfg.clients, func(i int) (err error) {
		urls[i], err = c.createQueue(ctx, prefix+strconv.Itoa(i))
		return err
	})
	return urls, err
}

func rate(n int, d time.Duration) string {
	return fmt.Sprintf("%.1fs, %.0f/s", d.Seconds(), float64(n)/d.Seconds())
}

// queues-many: SendMessage to one random queue of --queues vs to one queue.
// Each queue gets its first message in the set-up: a queue's first message
// makes its first record page and chunk, once in its life, and with
// 100,000 queues and a few seconds a round, most timed sends of the first
// round would be first messages and fewer in each later one. The timed
// sends then measure what the count costs (finding the queue, its cold
// memory, the collector visiting every queue), the same in every round; the
// engine's BenchmarkSendQueues gives the first message's cost (/cold).

func setupQueuesMany(ctx context.Context, se *scaleEnv, side *scaleSide) error {
	m0 := snapMem(ctx, se.tgt)
	start := time.Now()
	urls, err := createQueues(ctx, se, se.raw, se.prefix, side.count)
	if err != nil {
		return err
	}
	took := time.Since(start)
	side.queues = urls
	var m1 memSnap
	if side.count > 1 {
		m1 = snapMem(ctx, se.tgt)
	}
	start = time.Now()
	first := entry{body: payload(64)}
	if err := parallel(ctx, len(urls), se.cfg.clients, func(i int) error {
		return se.raw.sendMessage(ctx, urls[i], first)
	}); err != nil {
		return err
	}
	if side.count > 1 {
		side.notes = append(side.notes, fmt.Sprintf("created %d empty queues in %s; %s; sent each its first message (64 B) in %s",
			side.count, rate(side.count, took), growth(m0, m1, side.count, "queue"), rate(side.count, time.Since(start))))
	}
	return nil
}

func prepareQueuesMany(_ context.Context, e *env) (*workload, error) {
	qs := e.side.queues
	m := entry{body: payload(e.size)}
	return &workload{step: func(ctx context.Context, w *worker) error {
		q := qs[rand.IntN(len(qs))]
		return w.do("send", func() (int, error) { return 1, e.dp.sendMessage(ctx, q, m) })
	}}, nil
}

// topics-many: Publish to one random topic of --topics, each with one SQS
// subscription (raw delivery, to a queue of its own), vs to one topic.

func setupTopicsMany(ctx context.Context, se *scaleEnv, side *scaleSide) error {
	n := side.count
	m0 := snapMem(ctx, se.tgt)
	start := time.Now()
	urls, err := createQueues(ctx, se, se.raw, se.prefix, n)
	if err != nil {
		return err
	}
	tq := time.Since(start)
	m1 := snapMem(ctx, se.tgt)
	side.topics = make([]string, n)
	start = time.Now()
	err = parallel(ctx, n, se.cfg.clients, func(i int) error {
		arn, err := queueArnOf(urls[i], "us-east-1")
		if err != nil {
			return err
		}
		if side.topics[i], err = se.raw.createTopic(ctx, se.prefix+strconv.Itoa(i)); err != nil {
			return err
		}
		return se.raw.subscribeRaw(ctx, side.topics[i], arn)
	})
	if err != nil {
		return err
	}
	tt := time.Since(start)
	if n > 1 {
		m2 := snapMem(ctx, se.tgt)
		side.notes = append(side.notes,
			fmt.Sprintf("created %d queues in %s; %s", n, rate(n, tq), growth(m0, m1, n, "queue")),
			fmt.Sprintf("created %d topics, each with one SQS subscription, in %s; %s", n, rate(n, tt), growth(m1, m2, n, "topic with its subscription")))
	}
	return nil
}

func prepareTopicsMany(_ context.Context, e *env) (*workload, error) {
	ts := e.side.topics
	body := payload(e.size)
	return &workload{step: func(ctx context.Context, w *worker) error {
		t := ts[rand.IntN(len(ts))]
		return w.do("publish", func() (int, error) { return 1, e.dp.publish(ctx, t, body, nil) })
	}}, nil
}

// accounts: SendMessage and Publish signed with the keys of --accounts
// accounts (12-digit access key ids), each with its own queue and topic
// (subscribed to the queue), traffic spread evenly; vs one account, the
// default one (key 000000000000). The scaled side also measures, on a
// fanout of its own, the memory of --empty-accounts empty accounts.

// accountKey is the access key id of account i of a side: the default
// account for the baseline, 1000000000NN for the scaled side.
func accountKey(base int64, i int) string {
	return fmt.Sprintf("%012d", base+int64(i))
}

func setupAccounts(ctx context.Context, se *scaleEnv, side *scaleSide) error {
	n := side.count
	base := int64(100_000_000_000)
	if side.name == "one" {
		base = 0 // 000000000000, the default account
	}
	if side.name != "one" && se.cfg.emptyAccounts > 0 && se.tgt.cmd != nil {
		note, err := measureEmptyAccounts(ctx, se)
		if err != nil {
			return err
		}
		side.notes = append(side.notes, note)
	}
	side.queues, side.topics = make([]string, n), make([]string, n)
	side.dps = map[string][]dataPlane{kindHTTP: make([]dataPlane, n), kindSDK: make([]dataPlane, n)}
	m0 := snapMem(ctx, se.tgt)
	start := time.Now()
	err := parallel(ctx, n, se.cfg.clients, func(i int) error {
		key := accountKey(base, i)
		c := se.raw.withKey(key)
		q, err := c.createQueue(ctx, se.prefix+"q")
		if err != nil {
			return err
		}
		arn, err := queueArnOf(q, "us-east-1")
		if err != nil {
			return err
		}
		if !strings.Contains(arn, ":"+key+":") {
			return fmt.Errorf("key %s made queue %s in another account: does fanout take the account from the key?", key, arn)
		}
		if side.topics[i], err = c.createTopic(ctx, se.prefix+"t"); err != nil {
			return err
		}
		if err := c.subscribeRaw(ctx, side.topics[i], arn); err != nil {
			return err
		}
		side.queues[i] = q
		side.dps[kindHTTP][i] = se.dp[kindHTTP].(*rawClient).withKey(key)
		side.dps[kindSDK][i] = newSDKClientKey(se.tgt.endpoint, se.hc[kindSDK], key)
		return nil
	})
	if err != nil {
		return err
	}
	if n > 1 {
		m1 := snapMem(ctx, se.tgt)
		side.notes = append(side.notes, fmt.Sprintf("created %d accounts, each with a queue and a topic subscribed to it, in %.1fs; %s",
			n, time.Since(start).Seconds(), growth(m0, m1, n, "account")))
	}
	return nil
}

// measureEmptyAccounts starts a fresh fanout, makes --empty-accounts
// namespaces in it (a queue created and deleted in each: an account's
// namespace is made by its first queue or topic and stays) and reports
// their memory.
func measureEmptyAccounts(ctx context.Context, se *scaleEnv) (string, error) {
	t, err := startProcess(ctx, "fanout", se.tgt.cmd.Path, "--log-level", "error", "--pprof")
	if err != nil {
		return "", err
	}
	defer t.stop()
	raw := &rawClient{hc: newHTTPClient(se.cfg.clients), endpoint: t.endpoint}
	defer raw.hc.CloseIdleConnections()
	n := se.cfg.emptyAccounts
	m0 := snapMem(ctx, t)
	start := time.Now()
	err = parallel(ctx, n, se.cfg.clients, func(i int) error {
		c := raw.withKey(accountKey(200_000_000_000, i))
		q, err := c.createQueue(ctx, "empty")
		if err != nil {
			return err
		}
		return c.deleteQueue(ctx, q)
	})
	if err != nil {
		return "", err
	}
	took := time.Since(start)
	m1 := snapMem(ctx, t)
	return fmt.Sprintf("on a fresh fanout, %d empty accounts (a queue created and deleted in each) in %.1fs; %s",
		n, took.Seconds(), growth(m0, m1, n, "empty account")), nil
}

func prepareAccounts(_ context.Context, e *env) (*workload, error) {
	s := e.side
	dps := s.dps[e.kind]
	m := entry{body: payload(e.size)}
	if e.mode == "publish" {
		return &workload{step: func(ctx context.Context, w *worker) error {
			i := rand.IntN(len(dps))
			return w.do("publish", func() (int, error) { return 1, dps[i].publish(ctx, s.topics[i], m.body, nil) })
		}}, nil
	}
	return &workload{step: func(ctx context.Context, w *worker) error {
		i := rand.IntN(len(dps))
		return w.do("send", func() (int, error) { return 1, dps[i].sendMessage(ctx, s.queues[i], m) })
	}}, nil
}

// scaleCost compares, for one client kind, body size and op, a scale
// scenario's scaled side against its baseline (medians over rounds).
type scaleCost struct {
	Scenario         string  `json:"scenario"` // without the side: queues-many/64B
	Client           string  `json:"client"`
	Target           string  `json:"target"` // fanout, or fanout-base (the --base-bin build)
	Op               string  `json:"op"`
	Side             string  `json:"side"`
	CallsPerSec      float64 `json:"calls_per_sec"`
	BaseCallsPerSec  float64 `json:"baseline_calls_per_sec"`
	CallsRatio       float64 `json:"calls_per_sec_ratio"`
	SrvUsPerCall     float64 `json:"server_cpu_us_per_call,omitempty"`
	BaseSrvUsPerCall float64 `json:"baseline_server_cpu_us_per_call,omitempty"`
	SrvRatio         float64 `json:"server_cpu_ratio,omitempty"`
	P50us            float64 `json:"p50_us"`
	P99us            float64 `json:"p99_us"`
	BaseP50us        float64 `json:"baseline_p50_us"`
	BaseP99us        float64 `json:"baseline_p99_us"`
}

// judgedOp is the op a scale scenario's target is about: the wake latency
// of long-polls (whose sends are paced), else the primary op (send or
// publish; accounts' mode).
func judgedOp(base string) string {
	name, mode, _ := strings.Cut(base, "/")
	switch {
	case mode != "":
		return mode
	case name == "long-polls":
		return "wake"
	}
	if sc := findScenario(name); sc != nil {
		return sc.primary
	}
	return ""
}

// wakeTargetUs is issue 15's bound on the wake latency's p99.
const wakeTargetUs = 5000

// scaleCosts pairs each scaled side's row with its baseline's.
func scaleCosts(rows []summaryRow) []scaleCost {
	type key struct{ base, size, client, op, target string }
	build := func(t string) bool { return t == "fanout" || t == "fanout-base" }
	baseline := map[key]summaryRow{}
	for _, r := range rows {
		if base, side, size, ok := splitScaleName(r.Scenario); ok && side == "one" && build(r.Target) {
			baseline[key{base, size, r.Client, r.Op, r.Target}] = r
		}
	}
	var out []scaleCost
	for _, r := range rows {
		base, side, size, ok := splitScaleName(r.Scenario)
		if !ok || side == "one" || !build(r.Target) {
			continue
		}
		if r.Op != judgedOp(base) {
			continue
		}
		b, ok := baseline[key{base, size, r.Client, r.Op, r.Target}]
		if !ok {
			continue
		}
		// The sides alternate round by round: ratios are paired by round.
		pr := pairedRatio(r.perRound, b.perRound, r.opFigures, b.opFigures)
		out = append(out, scaleCost{
			Scenario: base + "/" + size, Client: r.Client, Target: r.Target, Op: r.Op, Side: side,
			CallsPerSec: r.CallsPerSec, BaseCallsPerSec: b.CallsPerSec, CallsRatio: pr.CallsPerSec,
			SrvUsPerCall: r.SrvUsPerCall, BaseSrvUsPerCall: b.SrvUsPerCall, SrvRatio: pr.SrvUsPerCall,
			P50us: r.P50us, P99us: r.P99us, BaseP50us: b.P50us, BaseP99us: b.P99us,
		})
	}
	return out
}

func printScaleCosts(w io.Writer, costs []scaleCost) {
	if len(costs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nscale in counts: the scaled side against the baseline (\"one\"), medians of alternating rounds (ratios: the median of each round's own)")
	for _, c := range costs {
		if c.Target != "fanout" {
			c.Client += " " + c.Target
		}
		if c.Op == "wake" {
			verdict := "met"
			if c.P99us > wakeTargetUs {
				verdict = "NOT met"
			}
			fmt.Fprintf(w, "%s %s wake (send to poll's return): p99 %s with %s vs %s with one queue, p50 %s vs %s (target p99 ≤ 5ms: %s)\n",
				c.Scenario, c.Client, fmtUs(c.P99us), c.Side, fmtUs(c.BaseP99us), fmtUs(c.P50us), fmtUs(c.BaseP50us), verdict)
			continue
		}
		verdict := "met"
		if c.CallsRatio < 0.95 {
			verdict = "NOT met"
		}
		srv := ""
		if c.SrvUsPerCall > 0 && c.BaseSrvUsPerCall > 0 {
			srv = fmt.Sprintf("; server CPU per call %.1fµs vs %.1fµs = %.2fx", c.SrvUsPerCall, c.BaseSrvUsPerCall, c.SrvRatio)
		}
		fmt.Fprintf(w, "%s %s %s: calls/s %s with %s vs %s with one = %.2fx (target within 5%%: %s)%s; p99 %s vs %s\n",
			c.Scenario, c.Client, c.Op, num(c.CallsPerSec), c.Side, num(c.BaseCallsPerSec), c.CallsRatio, verdict, srv,
			fmtUs(c.P99us), fmtUs(c.BaseP99us))
	}
}
