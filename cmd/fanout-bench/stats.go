package main

import (
	"math"
	"math/bits"
	"time"
)

// Latency histogram: log-linear buckets over nanoseconds, 64 sub-buckets per
// power of two, so any reported percentile is within ~1.6% of the true sample
// while memory stays fixed (a few KiB) no matter how many calls are recorded.
const (
	subBits    = 6
	subCount   = 1 << subBits              // sub-buckets per power of two
	linearTop  = 2 * subCount              // values below this get exact buckets
	numBuckets = (64 - subBits) * subCount // covers every non-negative int64
)

// histogram counts durations. The zero value is ready to use; it is not safe
// for concurrent use (each worker owns one and they are merged afterwards).
type histogram struct {
	counts []uint64
	n      uint64
	sum    float64
	min    int64
	max    int64
}

func bucketOf(v int64) int {
	if v < 0 {
		v = 0
	}
	if v < linearTop {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - (subBits + 1)
	return shift*subCount + int(uint64(v)>>uint(shift))
}

// bucketBounds returns the inclusive range of values that land in bucket i.
func bucketBounds(i int) (lo, hi int64) {
	if i < linearTop {
		return int64(i), int64(i)
	}
	shift := i/subCount - 1
	m := int64(i%subCount + subCount)
	return m << uint(shift), (m+1)<<uint(shift) - 1
}

// record adds one duration.
func (h *histogram) record(d time.Duration) {
	v := int64(d)
	if h.counts == nil {
		h.counts = make([]uint64, numBuckets)
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += float64(v)
}

// merge adds all of o's samples to h.
func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint64, numBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// count is the number of recorded samples.
func (h *histogram) count() uint64 { return h.n }

// mean is the exact arithmetic mean.
func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// percentile returns the q-quantile (0 < q <= 1) using the nearest-rank rule;
// the value is the middle of its bucket, clamped to the observed min and max
// so p0/p100 are exact.
func (h *histogram) percentile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketBounds(i)
			v := lo + (hi-lo)/2
			v = max(v, h.min)
			v = min(v, h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

// opStats aggregates one operation kind (e.g. "send", "e2e") over a run.
type opStats struct {
	calls    uint64 // completed calls, successful or not
	messages uint64 // messages carried by successful calls
	errors   uint64
	firstErr string // first error seen, to make failures diagnosable
	lat      histogram
}

func (s *opStats) merge(o *opStats) {
	s.calls += o.calls
	s.messages += o.messages
	s.errors += o.errors
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
	s.lat.merge(&o.lat)
}

// statSet maps an op name to its stats; each goroutine fills its own set.
type statSet map[string]*opStats

func (s statSet) op(name string) *opStats {
	st := s[name]
	if st == nil {
		st = &opStats{}
		s[name] = st
	}
	return st
}

func (s statSet) merge(o statSet) {
	for name, st := range o {
		s.op(name).merge(st)
	}
}
