package delivery

import "testing"

// The ring grows as values come, and keeps the last max of them, newest
// first, across its growth and its wrap-around.
func TestRingGrowsThenEvicts(t *testing.T) {
	t.Parallel()
	r := newRing(100, 1<<20, func(int) int64 { return 1 })
	if len(r.buf) != 0 {
		t.Fatalf("a new ring holds %d slots", len(r.buf))
	}
	for i := range 250 {
		r.push(i, 1)
		want := min(i+1, 100)
		var got []int
		r.newest("", func(v int) bool { got = append(got, v); return true })
		if len(got) != want || got[0] != i || got[len(got)-1] != i+1-want {
			t.Fatalf("after %d pushes: %v", i+1, got)
		}
	}
	if len(r.buf) != 100 || r.dropped != 150 {
		t.Fatalf("%d slots, %d dropped", len(r.buf), r.dropped)
	}
}
