package clock

import (
	"math"
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

func TestAdjustableAdvanceRunsDueTimersAtOnce(t *testing.T) {
	t.Parallel()
	a := NewAdjustable()
	start := a.Now()
	fired := make(chan time.Time, 2)
	a.AfterFunc(time.Hour, func() { fired <- a.Now() })
	late := a.AfterFunc(3*time.Hour, func() { t.Error("a stopped timer ran") })
	if !late.Stop() {
		t.Fatal("Stop reported false")
	}
	a.Advance(90 * time.Minute)
	select {
	case at := <-fired:
		if at.Sub(start) < 90*time.Minute {
			t.Fatalf("ran at +%v", at.Sub(start))
		}
	default:
		t.Fatal("Advance did not run the due timer before returning")
	}
	if a.Offset() != 90*time.Minute {
		t.Fatalf("offset %v", a.Offset())
	}
}

func TestAdjustableRunsTimersOnTheWallClock(t *testing.T) {
	t.Parallel()
	a := NewAdjustable()
	done := make(chan struct{})
	a.AfterFunc(10*time.Millisecond, func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("timer did not fire on the wall clock")
	}
}

// The clocks stop at Latest: past April 2262 Unix nanoseconds wrap (in-flight
// messages never returned, SentTimestamp went negative), and a maximal
// advance used to overflow Adjustable's offset back to 1974.
func TestClocksStopAtLatest(t *testing.T) {
	t.Parallel()
	m := NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ran := false
	m.AfterFunc(time.Hour, func() { ran = true })
	m.Advance(math.MaxInt64)
	m.Advance(math.MaxInt64)
	if !m.Now().Equal(Latest()) || m.Now().UnixNano() <= 0 || !ran {
		t.Fatalf("manual: %v (%d), due work ran %v", m.Now(), m.Now().UnixNano(), ran)
	}
	m.Set(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if !m.Now().Equal(Latest()) || m.Offset() <= 0 {
		t.Fatalf("manual Set: %v, offset %v", m.Now(), m.Offset())
	}
	// Adjustable follows the wall clock on from Latest, at its pace.
	a := NewAdjustable()
	for range 3 {
		a.Advance(math.MaxInt64)
		if now := a.Now(); now.After(Latest().Add(time.Minute)) || now.Before(Latest().Add(-time.Minute)) || a.Offset() <= 0 {
			t.Fatalf("adjustable: %v, offset %v", now, a.Offset())
		}
	}
	if Latest().Add(14*24*time.Hour).UnixNano() <= 0 {
		t.Fatal("Latest leaves no room for deadlines")
	}
}
