package main

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestFillTrend: a rate that falls by half as the queue grows shows as a
// fitted last/first of 0.5 whatever the noise of single windows, and a
// flat rate with one slow window does not look like a fall.
func TestFillTrend(t *testing.T) {
	depths := func(rates []float64) []fillSample {
		s := []fillSample{{depth: 0}}
		d := 0
		for _, r := range rates {
			d += int(r * 5)
			s = append(s, fillSample{depth: d})
		}
		return s
	}
	falling := []float64{100000, 95000, 90000, 85000, 80000, 75000, 70000, 65000, 60000, 55000, 50000}
	line, ok := fillTrend(falling, depths(falling))
	if !ok || !strings.Contains(line, "fitted last / first = 0.5") {
		t.Fatalf("falling: %q %v", line, ok)
	}
	flat := []float64{100000, 100000, 100000, 100000, 100000, 100000, 100000, 100000, 100000, 70000}
	line, ok = fillTrend(flat, depths(flat))
	if !ok || strings.Contains(line, "= 0.7") || !strings.Contains(line, "over 10 windows") {
		t.Fatalf("flat with a slow last window: %q %v", line, ok)
	}
	if _, ok := fillTrend(flat[:2], depths(flat[:2])); ok {
		t.Fatal("a trend from two windows")
	}
	unknown := depths(flat)
	unknown[3].depth = -1
	if _, ok := fillTrend(flat, unknown); ok {
		t.Fatal("a trend without the depths")
	}
}

// TestFillNotesKernelTime: each window's line gives the server's user and
// system CPU time a message, and the summary the first and last windows', when
// the tool could read them; without them the lines say nothing of it.
func TestFillNotesKernelTime(t *testing.T) {
	const s = time.Second
	samples := []fillSample{{at: 0, depth: 0, user: 0, sys: 0}, {at: 5 * s, depth: 500000, user: 5 * s, sys: s},
		{at: 10 * s, depth: 1000000, user: 10 * s, sys: 3 * s}}
	rates := []float64{100000, 100000}
	notes := strings.Join(fillNotes(rates, samples, -1), "\n")
	for _, want := range []string{"user 10.00 µs, kernel 2.00 µs", "user 10.00 µs, kernel 4.00 µs",
		"first window then last: user 10.00 and 10.00 µs, kernel 2.00 and 4.00 µs"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no %q in\n%s", want, notes)
		}
	}
	for i := range samples {
		samples[i].sys = -1
	}
	if notes := strings.Join(fillNotes(rates, samples, -1), "\n"); strings.Contains(notes, "kernel") || strings.Contains(notes, "user") {
		t.Errorf("kernel time without readings:\n%s", notes)
	}
}

// TestFillNotesMemoryLimit: once fanout refuses sends at its memory limit
// the queue stops growing, so the windows from then on say nothing about
// depth; the ratio and the fit end before them, and a note says where.
func TestFillNotesMemoryLimit(t *testing.T) {
	var samples []fillSample
	for i := range 7 {
		samples = append(samples, fillSample{at: time.Duration(i) * 5 * time.Second, depth: min(i, 4) * 500000, user: -1, sys: -1})
	}
	rates := []float64{100000, 100000, 95000, 100000, 40000, 0}
	notes := strings.Join(fillNotes(rates, samples, 4), "\n")
	for _, want := range []string{"from window 5 on, the queue at depth 2000000", "over the 4 windows before it",
		"last window / first = 1.00", "least squares over 4 windows"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no %q in\n%s", want, notes)
		}
	}
	if notes := strings.Join(fillNotes(rates, samples, -1), "\n"); strings.Contains(notes, "memory limit") || !strings.Contains(notes, "last window / first = 0.00") {
		t.Errorf("without a limit:\n%s", notes)
	}
	if !throttledErr(errors.New(`SendMessageBatch: HTTP 400: {"__type":"com.amazonaws.sqs#RequestThrottled","message":"fanout is near its memory limit"}`)) ||
		throttledErr(errors.New("SendMessageBatch: HTTP 500")) || throttledErr(nil) {
		t.Error("throttledErr")
	}
}

// TestPrefaultGivesMemoryBack: prefault touches what it is asked to and
// leaves the tool's heap as it was, so the server gets the pages.
func TestPrefaultGivesMemoryBack(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	prefault(3 * prefaultBlock)
	runtime.ReadMemStats(&after)
	if after.TotalAlloc-before.TotalAlloc < 3*prefaultBlock {
		t.Errorf("touched %d bytes, want %d", after.TotalAlloc-before.TotalAlloc, 3*prefaultBlock)
	}
	if after.HeapInuse > before.HeapInuse+prefaultBlock/2 {
		t.Errorf("heap in use %d after, %d before: not given back", after.HeapInuse, before.HeapInuse)
	}
	if got := after.HeapSys - after.HeapReleased; got > before.HeapSys-before.HeapReleased+prefaultBlock/2 {
		t.Errorf("heap kept from the OS %d after, %d before", got, before.HeapSys-before.HeapReleased)
	}
}

// TestProcessTimes reads this process's own user and system CPU time,
// after work that takes some of both.
func TestProcessTimes(t *testing.T) {
	u0, s0, err := processTimes(os.Getpid(), clockTick())
	if err != nil {
		t.Fatal(err)
	}
	prefault(prefaultBlock) // pages faulted in: kernel time
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	u1, s1, err := processTimes(os.Getpid(), clockTick())
	if err != nil || u1 < u0 || s1 < s0 || u1+s1 == u0+s0 {
		t.Fatalf("user %v then %v, system %v then %v: %v", u0, u1, s0, s1, err)
	}
}
