package jsondepth

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/internal/ascii"
)

// reference is what Valid replaces: Within, then gjson's validator.
func reference(text string, limit int) bool { return Within(text, limit) && gjson.Valid(text) }

var validSeeds = []string{
	``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e-`, `.5`, `-.5`,
	`1.5e10`, `123abc`, `true`, `tru`, `truex`, `false`, `null`, `nul`, `"a"`, `"a`, `"\u00e9"`, `"\u00g9"`,
	`"\u12"`, `"\x"`, `"\/\b\f\n\r\t\"\\"`, "\"a\tb\"", "\"\x01\"", `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`,
	`{"a":1 "b":2}`, `{"a":[1,2,{"b":null}],"c":"d"}`, `[1,]`, `[,1]`, `[1 2]`, `[1,2`, `{"a":1`, `[[[]]]`,
	`[[[[]]]]`, `{"a":{"b":{"c":{}}}}`, `]`, `}`, `[}`, `{]`, `{"a":1}}`, `[1]]`, `{"a":1} x`, `{} {}`,
	"\xff", `"` + "\xff\xfe" + `"`, `{"QueueUrl":"http://x/1/q","Entries":[{"Id":"1","MessageBody":"b"}]}`,
	"[\n1\r\n,\t2 ]", `{"":""}`, `[-1,-0.0e0,1e99]`, `[1e]`, `[1e+]`, `[-a]`, `[0x1]`, `[00]`,
	`"abcdefghij\"klmnopqrstu"`, "\"abcdefghijk\x01lmnopq\"", `"abcdefgh\u00e9ijklmnopqrst"`, "\"abcdéfghijklmnopq\"",
	`["abcdefghijklmnop","qrstuvwxyz012345"]`, `"abcdefghijklmnop`, `"abcdefghijklmno\`,
}

func TestValidMatchesReference(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 1, 2, 3, Max} {
		for _, s := range validSeeds {
			if got, want := Valid(s, limit), reference(s, limit); got != want {
				t.Errorf("Valid(%q, %d) = %v, want %v", s, limit, got, want)
			}
			if got, want := Valid([]byte(s), limit), reference(s, limit); got != want {
				t.Errorf("Valid([]byte(%q), %d) = %v, want %v", s, limit, got, want)
			}
		}
	}
	deep := strings.Repeat("[", Max) + strings.Repeat("]", Max)
	if !Valid(deep, Max) || Valid("["+deep+"]", Max) || Valid(strings.Repeat("[", 1<<20), Max) {
		t.Error("depth bound")
	}
}

func TestValidAllocatesNothing(t *testing.T) {
	body := []byte(`{"QueueUrl":"http://x/1/q","Entries":[{"Id":"1","MessageBody":"b\u00e9","DelaySeconds":-1.5e3}]}`)
	if n := testing.AllocsPerRun(100, func() { Valid(body, Max) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = min(max(limit, 0), Max)
		if got, want := Valid(s, limit), reference(s, limit); got != want {
			t.Fatalf("Valid(%q, %d) = %v, want %v", s, limit, got, want)
		}
	})
}

// BenchmarkValid compares Valid with the two passes it replaces on a
// SendMessageBatch of ten 1 KiB bodies.
func BenchmarkValid(b *testing.B) {
	var e []string
	for range 10 {
		e = append(e, `{"Id":"m","MessageBody":"`+strings.Repeat("abcdefghij", 102)+`"}`)
	}
	body := []byte(`{"QueueUrl":"http://localhost:4566/000000000000/q","Entries":[` + strings.Join(e, ",") + `]}`)
	b.Run("Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			Valid(body, Max)
		}
	})
	b.Run("Within+gjson", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			_ = Within(body, Max) && gjson.ValidBytes(body)
		}
	})
	// Short strings, where a search's set-up costs more than its scan.
	var short []string
	for i := range 10 {
		short = append(short, fmt.Sprintf(`{"Id":"m%d","MessageBody":"hello","DelaySeconds":0}`, i))
	}
	small := []byte(`{"QueueUrl":"http://localhost:4566/000000000000/q","Entries":[` + strings.Join(short, ",") + `]}`)
	b.Run("Valid/short", func(b *testing.B) {
		b.SetBytes(int64(len(small)))
		for b.Loop() {
			Valid(small, Max)
		}
	})
}

func TestSpecialIsExact(t *testing.T) {
	t.Parallel()
	ref := func(w uint64) bool {
		for k := 0; k < 8; k++ {
			if c := byte(w >> (8 * k)); c < ' ' || c == '"' || c == '\\' {
				return true
			}
		}
		return false
	}
	// Every byte value in every position, among neighbours that are plain,
	// special, or high (UTF-8) bytes, whose borrows could mislead the test.
	for _, fill := range []byte{'a', 0xff, 0x80, ' ', '#', '[', ']'} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var w uint64
				for k := 0; k < 8; k++ {
					b := fill
					if k == pos {
						b = byte(c)
					}
					w |= uint64(b) << (8 * k)
				}
				if special(w) != ref(w) {
					t.Fatalf("special(%#016x) = %v", w, special(w))
				}
			}
		}
	}
}

func TestValueEndStopsAfterTheValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		at   int
		want int
	}{
		{`{"a":[1,"x"]} tail`, 0, 13}, {`x "abcdefghijklmnop\"q" y`, 2, 23}, {`[1, 2`, 0, -1},
		{`  true,`, 2, 6}, {`{"a":{"b":1}}`, 5, 12}, {`[[1]]`, 0, -1},
	} {
		limit := Max
		if c.text == `[[1]]` {
			limit = 1
		}
		if got := ValueEnd(c.text, c.at, limit); got != c.want {
			t.Errorf("ValueEnd(%q, %d) = %d, want %d", c.text, c.at, got, c.want)
		}
	}
}

// TestPlainStringEnd checks the end and the plain flag against gjson, which
// reads the string, and the bytes it holds: plain means the value is the
// content as it stands, with nothing below 0x20 or above 0x7f.
func TestPlainStringEnd(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("abcdefgh", 20)
	texts := []string{
		`""`, `"a"`, `"Id"`, `"` + long + `"`, `"` + long + `\"` + long + `"`, `"a\\"`, `"\\"`,
		`"` + long + `é"`, `"é` + long + `"`, `"` + long + "\x7f" + `"`, `"` + long + `\u00e9"`,
		`"` + long, `"` + long + "\x01" + `"`, `"a\"`, `"` + long + `\x"`,
	}
	// Every string up to five words long with one byte that is not plain
	// letters at each place: the two first words are read apart from the rest.
	for n := range 41 {
		for at := range n {
			for _, c := range []string{`"`, `\`, `\"`, "\x01", "\xc3\xa9", "\x7f", "\xff"} {
				texts = append(texts, `"`+long[:at]+c+long[at:n]+`"`)
			}
		}
	}
	for _, s := range texts {
		for _, tail := range []string{"", `,"b"`, ` "c\"d" `} {
			checkPlainStringEnd(t, s+tail)
		}
	}
}

func FuzzPlainStringEnd(f *testing.F) {
	f.Add(`"abc\"d"`)
	f.Add(`"` + strings.Repeat("x", 20) + "\xc3\xa9" + `" , "y"`)
	f.Fuzz(func(t *testing.T, text string) {
		if strings.HasPrefix(text, `"`) {
			checkPlainStringEnd(t, text)
		}
	})
}

// checkPlainStringEnd checks PlainStringEnd on the string text starts with.
func checkPlainStringEnd(t *testing.T, text string) {
	t.Helper()
	end, plain := PlainStringEnd(text, 0)
	wantEnd := -1
	if r := gjson.Parse(text); r.Type == gjson.String && gjson.Valid(r.Raw) {
		wantEnd = len(r.Raw)
	}
	if end != wantEnd {
		t.Fatalf("PlainStringEnd(%q) ends at %d, want %d", text, end, wantEnd)
	}
	if got := StringEnd([]byte(text), 0); got != end {
		t.Fatalf("StringEnd([]byte(%q)) = %d, want %d", text, got, end)
	}
	if end < 0 {
		return
	}
	content := text[1 : end-1]
	if want := !strings.Contains(content, `\`) && ascii.PlainPrefix(content) == len(content); plain != want {
		t.Fatalf("PlainStringEnd(%q) plain = %v, want %v", text, plain, want)
	}
}
