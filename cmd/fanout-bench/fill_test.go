package main

import (
	"strings"
	"testing"
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
