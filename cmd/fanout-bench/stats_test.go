package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestBucketsCoverAndOrder(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 127, 128, 130, 1000, 1 << 20, 1<<40 + 12345, math.MaxInt64} {
		i := bucketOf(v)
		if i <= prev {
			t.Fatalf("bucket of %d is %d, not above %d", v, i, prev)
		}
		if i >= numBuckets {
			t.Fatalf("bucket of %d is %d, out of range", v, i)
		}
		lo, hi := bucketBounds(i)
		if v < lo || v > hi {
			t.Fatalf("%d not in its bucket [%d, %d]", v, lo, hi)
		}
		prev = i
	}
	// Adjacent buckets tile the number line.
	for i := 1; i < numBuckets; i++ {
		_, hiPrev := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		if lo != hiPrev+1 {
			t.Fatalf("gap between bucket %d and %d: %d..%d", i-1, i, hiPrev, lo)
		}
	}
}

func TestPercentilesMatchSortedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h histogram
	samples := make([]int64, 100000)
	for i := range samples {
		// Log-normal-ish latencies between ~10µs and ~100ms.
		samples[i] = int64(math.Exp(rng.NormFloat64()*1.2 + 12))
		h.record(time.Duration(samples[i]))
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		want := float64(samples[int(math.Ceil(q*float64(len(samples))))-1])
		got := float64(h.percentile(q))
		if math.Abs(got-want)/want > 0.02 {
			t.Errorf("p%v = %v, want %v within 2%%", q*100, got, want)
		}
	}
	if got := h.percentile(1); got != time.Duration(samples[len(samples)-1]) {
		t.Errorf("p100 = %v, want exact max %v", got, samples[len(samples)-1])
	}
	if h.count() != uint64(len(samples)) {
		t.Errorf("count = %d", h.count())
	}
}

func TestPercentileSmallExact(t *testing.T) {
	var h histogram
	for v := 1; v <= 100; v++ {
		h.record(time.Duration(v))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 1: 100, 0.001: 1} {
		if got := h.percentile(q); got != want {
			t.Errorf("p%v = %v, want %v", q*100, got, want)
		}
	}
	if h.mean() != 50 { // 50.5 truncated
		t.Errorf("mean = %v", h.mean())
	}
	var empty histogram
	if empty.percentile(0.5) != 0 {
		t.Error("empty histogram should report 0")
	}
}

func TestMerge(t *testing.T) {
	var a, b, all histogram
	for v := 1; v <= 1000; v++ {
		d := time.Duration(v) * time.Microsecond
		all.record(d)
		if v%3 == 0 {
			a.record(d)
		} else {
			b.record(d)
		}
	}
	a.merge(&b)
	for _, q := range []float64{0.5, 0.99, 1} {
		if a.percentile(q) != all.percentile(q) {
			t.Errorf("merged p%v = %v, want %v", q*100, a.percentile(q), all.percentile(q))
		}
	}
	if a.min != all.min || a.max != all.max || a.count() != all.count() {
		t.Errorf("merged min/max/count differ")
	}
	s := statSet{}
	s.op("x").calls = 2
	o := statSet{}
	o.op("x").calls = 3
	o.op("x").firstErr = "boom"
	s.merge(o)
	if s["x"].calls != 5 || s["x"].firstErr != "boom" {
		t.Errorf("statSet merge: %+v", s["x"])
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
}
