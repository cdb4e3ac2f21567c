package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// opOrder fixes the row order within a run: the primary op comes first, then
// these, then anything else alphabetically.
var opOrder = []string{"send", "send-batch", "publish", "delivered", "attempt", "gave-up", "receive", "delete", "e2e", "wake"}

// sampleOp reports whether op counts samples or messages rather than calls
// (e2e and wake latency, the http-delivery sink's receipts), so calls/s
// means nothing.
func sampleOp(op string) bool {
	return op == "e2e" || op == "delivered" || op == "gave-up" || op == "wake"
}

func sortedOps(r *result) []string {
	ops := make([]string, 0, len(r.Ops))
	for op := range r.Ops {
		ops = append(ops, op)
	}
	rank := func(op string) int {
		if op == r.Primary {
			return -1
		}
		if i := slices.Index(opOrder, op); i >= 0 {
			return i
		}
		return len(opOrder)
	}
	sort.Slice(ops, func(i, j int) bool {
		ri, rj := rank(ops[i]), rank(ops[j])
		if ri != rj {
			return ri < rj
		}
		return ops[i] < ops[j]
	})
	return ops
}

// opFigures are the per-op numbers of one run.
type opFigures struct {
	CallsPerSec float64 `json:"calls_per_sec"`
	MsgsPerSec  float64 `json:"msgs_per_sec"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	// Server and client CPU per primary call and message; only on the
	// primary op, and server CPU only for targets this tool started.
	SrvUsPerCall float64 `json:"server_cpu_us_per_call,omitempty"`
	SrvUsPerMsg  float64 `json:"server_cpu_us_per_msg,omitempty"`
	CliUsPerCall float64 `json:"client_cpu_us_per_call,omitempty"`
}

func figures(r *result, op string) opFigures {
	st := r.Ops[op]
	secs := r.Elapsed.Seconds()
	f := opFigures{
		CallsPerSec: float64(st.calls) / secs,
		MsgsPerSec:  float64(st.messages) / secs,
		P50us:       us(st.lat.percentile(0.50)),
		P99us:       us(st.lat.percentile(0.99)),
	}
	if op == r.Primary {
		if st.calls > 0 {
			f.CliUsPerCall = us(r.ClientCPU) / float64(st.calls)
			if r.ServerCPU >= 0 {
				f.SrvUsPerCall = us(r.ServerCPU) / float64(st.calls)
			}
		}
		if st.messages > 0 && r.ServerCPU >= 0 {
			f.SrvUsPerMsg = us(r.ServerCPU) / float64(st.messages)
		}
	}
	return f
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

const rowFormat = "%-14s %-4s %-30s %-10s %10s %10s %9s %9s %7s %10s %10s %10s\n"

func printHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "target", "cli", "scenario", "op", "calls/s", "msgs/s", "p50", "p99", "errors",
		"srvµs/call", "srvµs/msg", "cliµs/call")
}

// printRun prints one row per op of a run, then its notes and errors.
func printRun(w io.Writer, r *result) {
	tname := r.Target
	if strings.Contains(tname, "://") {
		tname = "url"
	}
	for _, op := range sortedOps(r) {
		st := r.Ops[op]
		f := figures(r, op)
		calls := num(f.CallsPerSec)
		if sampleOp(op) {
			calls = "-" // samples, not calls
		}
		fmt.Fprintf(w, rowFormat, tname, r.Client, r.Scenario, op, calls, num(f.MsgsPerSec),
			dur(st.lat.percentile(0.50), st.lat.count()), dur(st.lat.percentile(0.99), st.lat.count()),
			fmt.Sprint(st.errors), cpu(f.SrvUsPerCall), cpu(f.SrvUsPerMsg), cpu(f.CliUsPerCall))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "        note: %s\n", n)
	}
	if r.RSSAfter > 0 && r.Prefilled {
		fmt.Fprintf(w, "        note: server RSS %.1f MiB before pre-fill, %.1f MiB after\n",
			float64(r.RSSBefore)/1024, float64(r.RSSAfter)/1024)
	}
	for _, op := range sortedOps(r) {
		if st := r.Ops[op]; st.firstErr != "" {
			fmt.Fprintf(w, "        %s error (%d): %s\n", op, st.errors, st.firstErr)
		}
	}
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func cpu(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func dur(d time.Duration, n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmtUs(us(d))
}

func fmtUs(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fs", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.2fms", v/1e3)
	}
	return fmt.Sprintf("%.0fµs", v)
}

// summaryRow is the median over rounds of one op for one scenario, client
// kind and target; Target "fanout/null" rows hold the median of the rounds'
// own ratios (pairedRatio),
// and "fanout-null" rows the differences of their latencies (P50us, P99us;
// the other figures 0).
type summaryRow struct {
	Scenario string `json:"scenario"`
	Client   string `json:"client"`
	Op       string `json:"op"`
	Target   string `json:"target"`
	Rounds   int    `json:"rounds"`
	opFigures
	// perRound holds a target row's figures round by round, for ratios
	// paired by round (pairedRatio); nil in ratio rows.
	perRound []opFigures
}

func summarize(results []*result, targets []string) []summaryRow {
	type key struct{ scenario, client, op string }
	var keys []key
	byKey := map[key]map[string][]opFigures{}
	primary := map[string]string{}
	for _, r := range results {
		primary[r.Scenario] = r.Primary
		for _, op := range sortedOps(r) {
			k := key{r.Scenario, r.Client, op}
			if byKey[k] == nil {
				byKey[k] = map[string][]opFigures{}
				keys = append(keys, k)
			}
			byKey[k][r.Target] = append(byKey[k][r.Target], figures(r, op))
		}
	}
	var rows []summaryRow
	for _, k := range keys {
		med := map[string]opFigures{}
		for _, t := range targets {
			fs := byKey[k][t]
			if len(fs) == 0 {
				continue
			}
			m := medianFigures(fs)
			med[t] = m
			rows = append(rows, summaryRow{k.scenario, k.client, k.op, t, len(fs), m, fs})
		}
		// A logging fanout against the plain one: the request log's cost.
		for _, t := range targets {
			if l, ok := med[t]; ok && strings.HasPrefix(t, "fanout-") {
				if f, ok := med["fanout"]; ok {
					rows = append(rows, summaryRow{k.scenario, k.client, k.op, t + "/fanout", 0, pairedRatio(byKey[k][t], byKey[k]["fanout"], l, f), nil})
				}
			}
		}
		// The null server against the hello handler: how lean the ceiling is.
		if n, ok := med["null"]; ok {
			if h, ok := med["hello"]; ok {
				rows = append(rows, summaryRow{k.scenario, k.client, k.op, "null/hello", 0, pairedRatio(byKey[k]["null"], byKey[k]["hello"], n, h), nil})
			}
		}
		// The store floor against the null server (what keeping the bytes
		// costs), and fanout against the floor (what its engine costs).
		if s, ok := med["null-store"]; ok {
			if n, ok := med["null"]; ok {
				rows = append(rows, summaryRow{k.scenario, k.client, k.op, "null-store/null", 0, pairedRatio(byKey[k]["null-store"], byKey[k]["null"], s, n), nil})
			}
			if f, ok := med["fanout"]; ok {
				rows = append(rows, summaryRow{k.scenario, k.client, k.op, "fanout/null-store", 0, pairedRatio(byKey[k]["fanout"], byKey[k]["null-store"], f, s), nil})
			}
		}
		a, okA := med["fanout"]
		b, okB := med["null"]
		if okA && okB {
			rows = append(rows, summaryRow{k.scenario, k.client, k.op, "fanout/null", 0, pairedRatio(byKey[k]["fanout"], byKey[k]["null"], a, b), nil})
			if k.op == primary[k.scenario] && a.P99us > 0 && b.P99us > 0 {
				rows = append(rows, summaryRow{k.scenario, k.client, k.op, "fanout-null", 0, opFigures{
					P50us: a.P50us - b.P50us,
					P99us: a.P99us - b.P99us,
				}, nil})
			}
		}
	}
	return rows
}

// pairedRatio is the median over rounds of each round's own ratio of a's
// figures to b's: the targets of a round run back to back, so a machine
// that is slower in one round than in another (by a third, on a small
// shared one) slows both sides of that round's ratio alike, where a ratio
// of the two medians may take them from different rounds. With unequal
// round counts (a run cut short) it falls back to the ratio of the medians
// ma and mb.
func pairedRatio(as, bs []opFigures, ma, mb opFigures) opFigures {
	if len(as) != len(bs) || len(as) == 0 {
		return ratioFigures(ma, mb)
	}
	rs := make([]opFigures, len(as))
	for i := range as {
		rs[i] = ratioFigures(as[i], bs[i])
	}
	return medianFigures(rs)
}

func ratioFigures(a, b opFigures) opFigures {
	return opFigures{
		CallsPerSec:  ratio(a.CallsPerSec, b.CallsPerSec),
		MsgsPerSec:   ratio(a.MsgsPerSec, b.MsgsPerSec),
		P50us:        ratio(a.P50us, b.P50us),
		P99us:        ratio(a.P99us, b.P99us),
		SrvUsPerCall: ratio(a.SrvUsPerCall, b.SrvUsPerCall),
		SrvUsPerMsg:  ratio(a.SrvUsPerMsg, b.SrvUsPerMsg),
		CliUsPerCall: ratio(a.CliUsPerCall, b.CliUsPerCall),
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// medianFigures takes the median of each figure independently.
func medianFigures(fs []opFigures) opFigures {
	m := func(get func(opFigures) float64) float64 {
		vs := make([]float64, len(fs))
		for i, f := range fs {
			vs[i] = get(f)
		}
		return median(vs)
	}
	return opFigures{
		CallsPerSec:  m(func(f opFigures) float64 { return f.CallsPerSec }),
		MsgsPerSec:   m(func(f opFigures) float64 { return f.MsgsPerSec }),
		P50us:        m(func(f opFigures) float64 { return f.P50us }),
		P99us:        m(func(f opFigures) float64 { return f.P99us }),
		SrvUsPerCall: m(func(f opFigures) float64 { return f.SrvUsPerCall }),
		SrvUsPerMsg:  m(func(f opFigures) float64 { return f.SrvUsPerMsg }),
		CliUsPerCall: m(func(f opFigures) float64 { return f.CliUsPerCall }),
	}
}

// median of vs (the mean of the middle two for an even count); vs is sorted
// in place.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

func printSummary(w io.Writer, rows []summaryRow, rounds int) {
	fmt.Fprintf(w, "\nmedians over %d round(s); ratio rows are the median of each round's own fanout/null (calls/s above 1 = fanout faster; p50, p99, CPU above 1 = fanout costlier); fanout-null rows are latency differences\n", rounds)
	const f = "%-30s %-4s %-10s %-18s %10s %10s %9s %9s %10s %10s %10s\n"
	fmt.Fprintf(w, f, "scenario", "cli", "op", "target", "calls/s", "msgs/s", "p50", "p99", "srvµs/call", "srvµs/msg", "cliµs/call")
	for _, r := range rows {
		if strings.Contains(r.Target, "/") && !strings.Contains(r.Target, "://") { // a ratio row: fanout/null, null/hello, ...
			x := func(v float64) string {
				if v == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2fx", v)
			}
			calls := x(r.CallsPerSec)
			if sampleOp(r.Op) {
				calls = "-"
			}
			fmt.Fprintf(w, f, r.Scenario, r.Client, r.Op, r.Target, calls, x(r.MsgsPerSec), x(r.P50us), x(r.P99us),
				x(r.SrvUsPerCall), x(r.SrvUsPerMsg), x(r.CliUsPerCall))
			continue
		}
		if r.Target == "fanout-null" {
			fmt.Fprintf(w, f, r.Scenario, r.Client, r.Op, "fanout-null", "-", "-", signedUs(r.P50us), signedUs(r.P99us), "-", "-", "-")
			continue
		}
		tname := r.Target
		if strings.Contains(tname, "://") {
			tname = "url"
		}
		calls := num(r.CallsPerSec)
		if sampleOp(r.Op) {
			calls = "-"
		}
		lat := func(v float64) string {
			if v == 0 {
				return "-"
			}
			return fmtUs(v)
		}
		fmt.Fprintf(w, f, r.Scenario, r.Client, r.Op, tname, calls, num(r.MsgsPerSec), lat(r.P50us), lat(r.P99us),
			cpu(r.SrvUsPerCall), cpu(r.SrvUsPerMsg), cpu(r.CliUsPerCall))
	}
}

// signedUs formats a latency difference in microseconds, with its sign.
func signedUs(v float64) string {
	if v >= 0 {
		return fmt.Sprintf("+%.0fµs", v)
	}
	return fmt.Sprintf("%.0fµs", v)
}

// printLatencyDiffs prints, for each scenario and client kind measured on
// both fanout and null, the p99 (and p50) of the primary op on fanout minus
// that on null: with --clients 1 that is the latency fanout adds to a call.
func printLatencyDiffs(w io.Writer, rows []summaryRow, results []*result, clients int) {
	primary := map[string]string{}
	for _, r := range results {
		primary[r.Scenario] = r.Primary
	}
	first := true
	for _, r := range rows {
		if r.Target != "fanout-null" || primary[r.Scenario] != r.Op {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		verdict := ""
		if clients == 1 {
			// Issue 7's target for one client: p99 within 0.2 ms of null's.
			verdict = "; target p99 within 200µs: met"
			if r.P99us > 200 {
				verdict = "; target p99 within 200µs: NOT met"
			}
		}
		fmt.Fprintf(w, "latency fanout minus null: %s %s %s: p99 %s, p50 %s%s\n",
			r.Scenario, r.Client, r.Op, signedUs(r.P99us), signedUs(r.P50us), verdict)
	}
}

// filterCost compares, for one target and client kind, publish-filtered with
// N filtered subscriptions against its unfiltered baseline (medians over
// rounds). Ratios above 1 mean the filtered topic is costlier (or, for
// calls/s, faster).
type filterCost struct {
	Target           string  `json:"target"`
	Client           string  `json:"client"`
	Filtered         string  `json:"filtered_scenario"`
	Baseline         string  `json:"baseline_scenario"`
	CallsPerSec      float64 `json:"publish_calls_per_sec"`
	BaseCallsPerSec  float64 `json:"baseline_publish_calls_per_sec"`
	SrvUsPerCall     float64 `json:"server_cpu_us_per_publish"`
	BaseSrvUsPerCall float64 `json:"baseline_server_cpu_us_per_publish"`
	P99us            float64 `json:"publish_p99_us"`
	BaseP99us        float64 `json:"baseline_publish_p99_us"`
	CallsRatio       float64 `json:"calls_per_sec_ratio"`
	SrvRatio         float64 `json:"server_cpu_ratio"`
	P99Ratio         float64 `json:"p99_ratio"`
}

// filterCosts pairs each publish-filtered/filtered=N/<size>B with
// publish-filtered/unfiltered/<size>B.
func filterCosts(rows []summaryRow) []filterCost {
	const base = "publish-filtered/unfiltered"
	type key struct{ target, client, size string }
	baseline := map[key]summaryRow{}
	for _, r := range rows {
		if name, size := cutSize(r.Scenario); name == base && r.Op == "publish" {
			baseline[key{r.Target, r.Client, size}] = r
		}
	}
	var out []filterCost
	for _, r := range rows {
		name, size := cutSize(r.Scenario)
		if r.Op != "publish" || name == base || !strings.HasPrefix(name, "publish-filtered/") {
			continue
		}
		b, ok := baseline[key{r.Target, r.Client, size}]
		if !ok || r.perRound == nil { // a ratio or difference row (fanout/null, fanout-base/fanout, ...)
			continue
		}
		pr := pairedRatio(r.perRound, b.perRound, r.opFigures, b.opFigures) // each round runs both
		out = append(out, filterCost{
			Target: r.Target, Client: r.Client, Filtered: r.Scenario, Baseline: b.Scenario,
			CallsPerSec: r.CallsPerSec, BaseCallsPerSec: b.CallsPerSec,
			SrvUsPerCall: r.SrvUsPerCall, BaseSrvUsPerCall: b.SrvUsPerCall,
			P99us: r.P99us, BaseP99us: b.P99us,
			CallsRatio: pr.CallsPerSec,
			SrvRatio:   pr.SrvUsPerCall,
			P99Ratio:   pr.P99us,
		})
	}
	return out
}

// cutSize splits a variant name from its body-size suffix ("/64B").
func cutSize(name string) (base, size string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 || !strings.HasSuffix(name, "B") {
		return name, ""
	}
	if _, err := strconv.Atoi(name[i+1 : len(name)-1]); err != nil {
		return name, ""
	}
	return name[:i], name[i+1:]
}

func printFilterCosts(w io.Writer, costs []filterCost) {
	if len(costs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nfilter policies: publish to the filtered topic vs the unfiltered one (%d subscriptions get each message on both)\n", filteredMatches)
	for _, c := range costs {
		srv := "server CPU unknown"
		if c.SrvUsPerCall > 0 && c.BaseSrvUsPerCall > 0 {
			srv = fmt.Sprintf("server CPU per publish %.1fµs vs %.1fµs = %.2fx filtered/unfiltered",
				c.SrvUsPerCall, c.BaseSrvUsPerCall, c.SrvRatio)
			if c.Target == "fanout" {
				srv += " (target < 2x)"
			}
		}
		fmt.Fprintf(w, "%s %s %s: publish calls/s %s vs %s = %.2fx; %s; p99 %s vs %s\n",
			c.Target, c.Client, c.Filtered, num(c.CallsPerSec), num(c.BaseCallsPerSec), c.CallsRatio,
			srv, fmtUs(c.P99us), fmtUs(c.BaseP99us))
	}
}

// jsonOp and jsonRun are the machine-readable form of a run.
type jsonOp struct {
	Op         string  `json:"op"`
	Calls      uint64  `json:"calls"`
	Messages   uint64  `json:"messages"`
	Errors     uint64  `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	MeanUs     float64 `json:"mean_us"`
	MaxUs      float64 `json:"max_us"`
	opFigures
}

type jsonRun struct {
	Scenario     string   `json:"scenario"`
	Client       string   `json:"client"`
	Target       string   `json:"target"`
	Round        int      `json:"round"`
	Slices       int      `json:"slices"` // the timed phase's slices, alternating with other targets' (--slices)
	Primary      string   `json:"primary_op"`
	ElapsedSec   float64  `json:"elapsed_sec"`
	ServerCPUSec *float64 `json:"server_cpu_sec,omitempty"`
	ServerSysSec *float64 `json:"server_sys_sec,omitempty"` // the kernel's part of server_cpu_sec
	ClientCPUSec float64  `json:"client_cpu_sec"`
	RSSBeforeKiB int64    `json:"server_rss_before_kib,omitempty"`
	RSSAfterKiB  int64    `json:"server_rss_after_setup_kib,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	Ops          []jsonOp `json:"ops"`
}

func jsonReport(cfg *config, results []*result, sum []summaryRow, costs []filterCost) map[string]any {
	runs := make([]jsonRun, 0, len(results))
	for _, r := range results {
		jr := jsonRun{
			Scenario: r.Scenario, Client: r.Client, Target: r.Target, Round: r.Round, Slices: r.Slices, Primary: r.Primary,
			ElapsedSec: r.Elapsed.Seconds(), ClientCPUSec: r.ClientCPU.Seconds(),
			RSSBeforeKiB: r.RSSBefore, RSSAfterKiB: r.RSSAfter, Notes: r.Notes,
		}
		if r.ServerCPU >= 0 {
			s := r.ServerCPU.Seconds()
			jr.ServerCPUSec = &s
		}
		if r.ServerSys >= 0 {
			s := r.ServerSys.Seconds()
			jr.ServerSysSec = &s
		}
		for _, op := range sortedOps(r) {
			st := r.Ops[op]
			jr.Ops = append(jr.Ops, jsonOp{
				Op: op, Calls: st.calls, Messages: st.messages, Errors: st.errors, FirstError: st.firstErr,
				MeanUs: us(st.lat.mean()), MaxUs: us(time.Duration(st.lat.max)), opFigures: figures(r, op),
			})
		}
		runs = append(runs, jr)
	}
	return map[string]any{
		"config": map[string]any{
			"clients": cfg.clients, "duration_sec": cfg.duration.Seconds(), "warmup_sec": cfg.warmup.Seconds(),
			"size": cfg.size, "queued": cfg.queued, "rounds": cfg.rounds, "slices": cfg.sliceCount(), "targets": cfg.targets,
			"client_kinds": cfg.clientKinds, "filtered": cfg.filtered, "sink_fail": cfg.sinkFail, "window": cfg.window,
		},
		"runs":        runs,
		"summary":     sum,
		"filter_cost": costs,
	}
}
