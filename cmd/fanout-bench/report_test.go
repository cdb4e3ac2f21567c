package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeResult is a run whose primary op had calls calls over 1 s, with all
// latencies lat and the given server CPU.
func fakeResult(scenario, target, client string, calls int, lat, cpu time.Duration) *result {
	st := &opStats{calls: uint64(calls), messages: uint64(calls)}
	for range calls {
		st.lat.record(lat)
	}
	return &result{Scenario: scenario, Target: target, Client: client, Primary: "publish",
		Elapsed: time.Second, ServerCPU: cpu, Ops: statSet{"publish": st}}
}

func TestFanoutMinusNullRows(t *testing.T) {
	results := []*result{
		fakeResult("send", "fanout", "sdk", 100, 300*time.Microsecond, time.Second),
		fakeResult("send", "null", "sdk", 100, 200*time.Microsecond, time.Second),
	}
	results[0].Primary, results[1].Primary = "publish", "publish"
	rows := summarize(results, []string{"fanout", "null"})
	var diff *summaryRow
	for i := range rows {
		if rows[i].Target == "fanout-null" {
			diff = &rows[i]
		}
	}
	if diff == nil || diff.P99us < 95 || diff.P99us > 105 || diff.P50us < 95 || diff.P50us > 105 {
		t.Fatalf("fanout-null row %+v in %+v", diff, rows)
	}
	var out bytes.Buffer
	printLatencyDiffs(&out, rows, results, 1)
	if !strings.Contains(out.String(), "send sdk publish: p99 +") || !strings.Contains(out.String(), "within 200µs: met") {
		t.Errorf("latency diffs:\n%s", out.String())
	}
	out.Reset()
	printSummary(&out, rows, 1)
	if !strings.Contains(out.String(), "fanout-null") {
		t.Errorf("summary without the difference row:\n%s", out.String())
	}
}

func TestFilterCosts(t *testing.T) {
	results := []*result{
		fakeResult("publish-filtered/unfiltered", "fanout", "http", 1000, time.Millisecond, 100*time.Millisecond),
		fakeResult("publish-filtered/filtered=200", "fanout", "http", 800, time.Millisecond, 120*time.Millisecond),
		fakeResult("publish/subs=3", "fanout", "http", 900, time.Millisecond, 100*time.Millisecond),
	}
	costs := filterCosts(summarize(results, []string{"fanout"}))
	if len(costs) != 1 {
		t.Fatalf("costs %+v", costs)
	}
	c := costs[0]
	// 100 µs per publish unfiltered, 150 µs filtered.
	if c.Filtered != "publish-filtered/filtered=200" || c.CallsRatio != 0.8 || c.SrvRatio < 1.49 || c.SrvRatio > 1.51 {
		t.Errorf("cost %+v", c)
	}
	var out bytes.Buffer
	printFilterCosts(&out, costs)
	if !strings.Contains(out.String(), "= 1.50x filtered/unfiltered (target < 2x)") {
		t.Errorf("printed:\n%s", out.String())
	}
	// With a second build, each build has its cost; the builds' ratio
	// rows (fanout-base/fanout) are not a build and have none.
	results = append(results,
		fakeResult("publish-filtered/unfiltered", "fanout-base", "http", 1000, time.Millisecond, 100*time.Millisecond),
		fakeResult("publish-filtered/filtered=200", "fanout-base", "http", 500, time.Millisecond, 200*time.Millisecond))
	costs = filterCosts(summarize(results, []string{"fanout", "fanout-base"}))
	if len(costs) != 2 || costs[1].Target != "fanout-base" || costs[1].SrvRatio < 3.99 || costs[1].SrvRatio > 4.01 {
		t.Errorf("costs with fanout-base: %+v", costs)
	}
}

func TestNewFlags(t *testing.T) {
	var serve string
	cfg, err := parseFlags([]string{"--scenario", "publish-filtered,http-delivery-signed", "--filtered", "50,200",
		"--sink-fail", "0,0.5", "--window", "64", "--body-sizes", "64"}, &serve)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range cfg.variants() {
		names = append(names, v.name)
	}
	want := "publish-filtered/unfiltered/64B publish-filtered/filtered=50/64B publish-filtered/filtered=200/64B http-delivery-signed/64B http-delivery-signed/fail=0.5/64B"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("variants\n got %s\nwant %s", got, want)
	}
	if cfg.window != 64 {
		t.Errorf("window %d", cfg.window)
	}
	for _, bad := range [][]string{
		{"--sink-fail", "1"}, {"--sink-fail", "-0.1"}, {"--sink-fail", "x"}, {"--filtered", "2"},
		{"--window", "0"}, {"--memory", "-1"}, {"--memory", "10", "--target", "null"},
		{"--target", "fanout,fanout-base"}, {"--prefault", "-1"}, {"--prefault", "1025"},
	} {
		if _, err := parseFlags(bad, &serve); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if cfg, err := parseFlags([]string{"--memory", "1000000"}, &serve); err != nil || cfg.memory != 1000000 {
		t.Errorf("--memory: %v", err)
	}
	if cfg, err := parseFlags([]string{"--target", "fanout,null,fanout-base", "--base-bin", "old"}, &serve); err != nil || cfg.baseBin != "old" {
		t.Errorf("--base-bin: %v", err)
	}
	if cfg, err := parseFlags([]string{"--scenario", "fill", "--prefault", "1"}, &serve); err != nil || cfg.prefault != 1<<30 {
		t.Errorf("--prefault: %v", err)
	}
}

func TestParseStatus(t *testing.T) {
	const status = "Name:\tfanout\nVmPeak:\t 2000 kB\nVmHWM:\t    1500 kB\nVmRSS:\t    1234 kB\nThreads:\t9\n"
	m, err := parseStatus(status, "VmRSS", "VmHWM")
	if err != nil || m["VmRSS"] != 1234 || m["VmHWM"] != 1500 {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := parseStatus(status, "VmSwap"); err == nil {
		t.Error("missing field accepted")
	}
}

func TestHeapAllocOf(t *testing.T) {
	prof := "heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1 0x2\n\n# runtime.MemStats\n# Alloc = 111\n# TotalAlloc = 222\n# HeapAlloc = 12345\n# HeapSys = 999\n"
	if n, err := heapAllocOf(strings.NewReader(prof)); err != nil || n != 12345 {
		t.Fatalf("%d %v", n, err)
	}
	if _, err := heapAllocOf(strings.NewReader("nothing")); err == nil {
		t.Error("no HeapAlloc accepted")
	}
}

// TestRatiosPairedByRound: a ratio row is the median of the rounds' own
// ratios. One slow spell of one side (here a relaxed fanout's round that
// compacted) moves the ratio of the medians by a third and the paired
// ratio not at all. (The figures are a measured run's.)
func TestRatiosPairedByRound(t *testing.T) {
	var results []*result
	for i, calls := range [][2]int{{18301, 12215}, {18509, 17715}, {11595, 11219}} {
		a := fakeResult("send/1024B", "fanout", "http", calls[0], time.Millisecond, time.Second)
		b := fakeResult("send/1024B", "fanout-relaxed", "http", calls[1], time.Millisecond, time.Second)
		a.Round, b.Round = i+1, i+1
		results = append(results, a, b)
	}
	rows := summarize(results, []string{"fanout", "fanout-relaxed"})
	var got *summaryRow
	for i := range rows {
		if rows[i].Target == "fanout-relaxed/fanout" {
			got = &rows[i]
		}
	}
	if got == nil {
		t.Fatalf("no ratio row in %+v", rows)
	}
	// Per round 0.667, 0.957, 0.968; the medians' ratio would be 12215/18301 = 0.667.
	if got.CallsPerSec < 0.95 || got.CallsPerSec > 0.96 {
		t.Errorf("calls/s ratio %.3f, want the paired median 0.957", got.CallsPerSec)
	}
	// A run cut short (unequal rounds) falls back to the ratio of the medians.
	if r := pairedRatio([]opFigures{{CallsPerSec: 2}}, nil, opFigures{CallsPerSec: 2}, opFigures{CallsPerSec: 4}); r.CallsPerSec != 0.5 {
		t.Errorf("fallback %+v", r)
	}
}
