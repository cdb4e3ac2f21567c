package ascii

import (
	"strconv"
	"strings"
	"testing"
)

// reference is PlainPrefix byte by byte.
func reference(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x80 {
			return i
		}
	}
	return len(s)
}

// TestPlainPrefixIsExact puts every byte value at every position of texts
// around the word sizes, so a word test that misses a byte, or stops short
// of where the plain run ends, shows.
func TestPlainPrefixIsExact(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 64, 70} {
		plain := strings.Repeat("a~ 0", n)[:n]
		if got := PlainPrefix(plain); got != n {
			t.Fatalf("PlainPrefix(%d plain bytes) = %d", n, got)
		}
		for at := range n {
			for c := range 256 {
				s := plain[:at] + string([]byte{byte(c)}) + plain[at+1:]
				if got, want := PlainPrefix(s), reference(s); got != want {
					t.Fatalf("n=%d, byte %#x at %d: PlainPrefix = %d, want %d", n, c, at, got, want)
				}
			}
		}
	}
}

func FuzzPlainPrefix(f *testing.F) {
	f.Add("hello\x00world")
	f.Add(strings.Repeat("x", 40) + "é")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := PlainPrefix(s), reference(s); got != want {
			t.Fatalf("PlainPrefix(%q) = %d, want %d", s, got, want)
		}
	})
}

func BenchmarkPlainPrefix(b *testing.B) {
	for _, n := range []int{8, 64, 1024} {
		s := strings.Repeat("abcdefgh", n/8)
		b.Run(strconv.Itoa(n)+"B", func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				PlainPrefix(s)
			}
		})
	}
}
