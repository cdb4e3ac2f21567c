package clock

import (
	"testing"
	"time"
)

func TestManualRunsDueWorkInOrder(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewManual(start)
	var got []string
	var seen []time.Duration
	add := func(name string, d time.Duration) {
		m.AfterFunc(d, func() { got = append(got, name); seen = append(seen, m.Now().Sub(start)) })
	}
	add("c", 3*time.Second)
	add("a", time.Second)
	add("b", 2*time.Second)
	add("b2", 2*time.Second)
	stopped := m.AfterFunc(1500*time.Millisecond, func() { got = append(got, "stopped") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	m.Advance(2 * time.Second)
	if want := []string{"a", "b", "b2"}; !equal(got, want) {
		t.Fatalf("after 2s ran %v, want %v", got, want)
	}
	if seen[0] != time.Second || seen[1] != 2*time.Second {
		t.Fatalf("clock read %v while running due work, want each deadline", seen)
	}
	m.Advance(time.Hour)
	if want := []string{"a", "b", "b2", "c"}; !equal(got, want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	if m.Offset() != time.Hour+2*time.Second {
		t.Fatalf("offset %v", m.Offset())
	}
	if stopped.Stop() {
		t.Fatal("second Stop reported true")
	}
}

func TestManualWorkScheduledByWorkRunsInSameAdvance(t *testing.T) {
	t.Parallel()
	m := NewManual(time.Unix(0, 0))
	n := 0
	var tick func()
	tick = func() {
		n++
		if n < 5 {
			m.AfterFunc(time.Second, tick)
		}
	}
	m.AfterFunc(time.Second, tick)
	m.Advance(10 * time.Second)
	if n != 5 {
		t.Fatalf("ran %d times, want 5", n)
	}
	if m.Pending() != 0 {
		t.Fatalf("%d pending", m.Pending())
	}
}

func TestWaitOnManual(t *testing.T) {
	t.Parallel()
	m := NewManual(time.Unix(0, 0))
	ch, stop := Wait(m, 20*time.Second)
	defer stop()
	select {
	case <-ch:
		t.Fatal("fired before the clock moved")
	default:
	}
	m.Advance(20 * time.Second)
	select {
	case <-ch:
	default:
		t.Fatal("did not fire after 20s")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
