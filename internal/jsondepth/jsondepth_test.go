package jsondepth

import (
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	cases := []struct {
		text string
		max  int
		want bool
	}{
		{`{}`, 1, true},
		{`{"a":[1]}`, 1, false},
		{`{"a":[1]}`, 2, true},
		{`{"a":"[[[[[[["}`, 1, true},        // brackets in strings do not count
		{`{"a":"\"[[[[["}`, 1, true},        // nor after an escaped quote
		{`{"a":"\\"}` + `[[`, 1, false},     // an escaped backslash ends the escape
		{`[][][][][][][][][][][]`, 1, true}, // siblings do not add up
		{`]]]][[[[`, 3, false},
		{`"unterminated [[[[`, 1, true},
		{strings.Repeat("[", 1001), Max, false},
		{strings.Repeat("[", 1000), Max, true},
	}
	for _, c := range cases {
		if got := Within(c.text, c.max); got != c.want {
			t.Errorf("Within(%.40q, %d) = %v, want %v", c.text, c.max, got, c.want)
		}
		if got := Within([]byte(c.text), c.max); got != c.want {
			t.Errorf("Within([]byte %.40q, %d) = %v, want %v", c.text, c.max, got, c.want)
		}
	}
}

// A deep text is refused in one pass without allocating.
func TestWithinAllocatesNothing(t *testing.T) {
	deep := []byte(strings.Repeat("[", 1<<20))
	if n := testing.AllocsPerRun(5, func() { Within(deep, Max) }); n != 0 {
		t.Fatalf("Within allocated %v times", n)
	}
}
