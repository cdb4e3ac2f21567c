package sqs

import (
	"math"
	"testing"
)

// Whatever the queue's incarnation id, a handle starts with a letter (the
// AWS CLI takes an argument starting with "-" for an option) and decodes to
// what it was made of; anything else is not a handle.
func TestHandlesStartWithALetterAndRoundTrip(t *testing.T) {
	for _, uid := range []uint64{0, 1, math.MaxUint64, 0xF800000000000000, 0xFC00000000000000, newUID(), newUID()} {
		buf := make([]byte, handleText)
		putHandle(buf, uid, 42, 7)
		h := string(buf)
		if h[0] != 'A' {
			t.Errorf("uid %#x: handle %q", uid, h)
		}
		u, seq, gen, ok := decodeHandle(h)
		if !ok || u != uid || seq != 42 || gen != 7 {
			t.Errorf("uid %#x: decoded %#x %d %d %v", uid, u, seq, gen, ok)
		}
	}
	for _, bad := range []string{"", "A", "-AAAAAAAAAAAAAAAAAAAAAAAAAAA", "BAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAA!"} {
		if _, _, _, ok := decodeHandle(bad); ok {
			t.Errorf("%q decoded", bad)
		}
	}
}
