package awswire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONWriterRoundTrips(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "q\"uote\\back", "ctl\x00\x01\x1f", "nl\n\r\t", "héllo \u2028 😀 <&>"} {
		var o JSONObject
		o.Open()
		o.String("s", s)
		o.Int("n", -42)
		o.OpenArray("a")
		o.Item()
		o.Open()
		o.Bool("b", true)
		o.Close()
		o.Item()
		o.Open()
		o.Close()
		o.CloseArray()
		o.Close()
		var got struct {
			S string
			N int
			A []map[string]bool
		}
		if err := json.Unmarshal(o.Buf, &got); err != nil {
			t.Fatalf("%s: %v", o.Buf, err)
		}
		if got.S != s || got.N != -42 || len(got.A) != 2 || !got.A[0]["b"] {
			t.Fatalf("%q -> %s -> %+v", s, o.Buf, got)
		}
	}
}

// The eight-byte skip of AppendJSONString must not step over a byte that
// needs escaping or decoding, wherever it falls in a word: each string
// decodes to what encoding/json makes of it.
func TestAppendJSONStringWordBoundaries(t *testing.T) {
	t.Parallel()
	specials := []string{"\"", "\\", "\x00", "\x1f", "\n", "\t", "\x7f", "\xff", "\xc3", "é", "😀", "\u2028", " ", "~"}
	for _, sp := range specials {
		for n := 0; n < 41; n++ {
			for _, tail := range []int{0, 1, 7, 8, 9} {
				s := strings.Repeat("a", n) + sp + strings.Repeat("b", tail)
				got := AppendJSONString(nil, s)
				want, _ := json.Marshal(s)
				var g, w string
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("%q -> invalid JSON %q: %v", s, got, err)
				}
				_ = json.Unmarshal(want, &w)
				if g != w {
					t.Fatalf("%q -> %q, decodes to %q, want %q", s, got, g, w)
				}
			}
		}
	}
}

// BenchmarkAppendJSONString: a plain body (the fast path), one with a
// quote (the byte loop after the searches), and a message id.
func BenchmarkAppendJSONString(b *testing.B) {
	plain := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 29)[:1024]
	for _, c := range []struct{ name, s string }{
		{"plain/1KiB", plain}, {"quoted/1KiB", `"` + plain[1:]}, {"id", "0b8f1c9e-4a4e-4e8e-9d1a-3f6f2e1b7c5d"},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 2048)
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendJSONString(buf[:0], c.s)
			}
		})
	}
}
