package jsondepth

import (
	"encoding/binary"
	"strings"
	"unsafe"

	"github.com/fanout/fanout/internal/ascii"
)

// maxValidDepth is the deepest limit Valid takes: its stack of open
// containers is a fixed bit set, so that validating allocates nothing.
const maxValidDepth = 1024

// Valid reports whether text is one JSON value (RFC 8259; like gjson's
// validator, it does not check UTF-8) whose arrays and objects nest at most
// limit deep (at most 1024). It is Within and gjson.Valid in one flat pass
// with no recursion: one scan of a request body instead of two.
func Valid[T ~string | ~[]byte](text T, limit int) bool {
	end := ValueEnd(text, SkipSpace(text, 0), limit)
	return end >= 0 && SkipSpace(text, end) == len(text)
}

// ValueEnd checks the JSON value that starts at text[i] as Valid does, its
// arrays and objects nesting at most limit deep, and returns the index just
// after it, or -1 if it is not valid. What follows it is not looked at, so
// that a caller walking a document can check each value it skips.
func ValueEnd[T ~string | ~[]byte](text T, i, limit int) int {
	limit = min(limit, maxValidDepth)
	var objects [maxValidDepth / 64]uint64 // bit d: level d+1 is an object
	depth := 0
	n := len(text)
	for {
		// A value starts at i.
		if i >= n {
			return -1
		}
		switch c := text[i]; {
		case c == '{' || c == '[':
			if depth == limit {
				return -1
			}
			word, bit := depth/64, uint64(1)<<(depth%64)
			if c == '{' {
				objects[word] |= bit
			} else {
				objects[word] &^= bit
			}
			depth++
			i = skipSpace(text, i+1)
			if i < n && (c == '{' && text[i] == '}' || c == '[' && text[i] == ']') {
				depth--
				i++
				break // an empty container is a whole value
			}
			if c == '{' {
				if i = member(text, i); i < 0 {
					return -1
				}
			}
			continue
		case c == '"':
			if i, _ = stringEnd(text, i+1); i < 0 {
				return -1
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = numberEnd(text, i); i < 0 {
				return -1
			}
		case c == 't':
			if i = literalEnd(text, i, "true"); i < 0 {
				return -1
			}
		case c == 'f':
			if i = literalEnd(text, i, "false"); i < 0 {
				return -1
			}
		case c == 'n':
			if i = literalEnd(text, i, "null"); i < 0 {
				return -1
			}
		default:
			return -1
		}
		// A value ended at i: close containers until one takes another value.
		for {
			if depth == 0 {
				return i
			}
			i = skipSpace(text, i)
			if i >= n {
				return -1
			}
			object := objects[(depth-1)/64]&(uint64(1)<<((depth-1)%64)) != 0
			c := text[i]
			if c == '}' && object || c == ']' && !object {
				depth--
				i++
				continue
			}
			if c != ',' {
				return -1
			}
			i = skipSpace(text, i+1)
			if object {
				if i = member(text, i); i < 0 {
					return -1
				}
			}
			break
		}
	}
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace[T ~string | ~[]byte](text T, i int) int { return skipSpace(text, i) }

func skipSpace[T ~string | ~[]byte](text T, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// member reads `"key" :` at i and returns where its value starts, or -1.
func member[T ~string | ~[]byte](text T, i int) int {
	if i >= len(text) || text[i] != '"' {
		return -1
	}
	if i, _ = stringEnd(text, i+1); i < 0 {
		return -1
	}
	i = skipSpace(text, i)
	if i >= len(text) || text[i] != ':' {
		return -1
	}
	return skipSpace(text, i+1)
}

// StringEnd returns the index after the JSON string whose opening quote is
// text[i], checked as Valid checks it, or -1.
func StringEnd[T ~string | ~[]byte](text T, i int) int {
	end, _ := PlainStringEnd(text, i)
	return end
}

// PlainStringEnd is StringEnd, and reports too whether the string is plain:
// no escape, and only bytes from 0x20 to 0x7f, so that its content is its
// value and holds no character a text rule could refuse.
func PlainStringEnd[T ~string | ~[]byte](text T, i int) (end int, plain bool) {
	if i >= len(text) || text[i] != '"' {
		return -1, false
	}
	return stringEnd(text, i+1)
}

// stringEnd returns the index after the closing quote of the string whose
// content starts at i, or -1, and whether the string is plain.
func stringEnd[T ~string | ~[]byte](text T, i int) (int, bool) {
	s := asString(text)
	const highs = 0x8080808080808080
	var seen uint64 // the bytes read, or-ed: a high bit is UTF-8's
	// A short string ends within its first two words: read them one by
	// one, and the word with the end byte by byte.
	j := i
	for ; j+8 <= len(s) && j < i+16; j += 8 {
		w := word(s, j)
		if !special(w) {
			seen |= w
			continue
		}
		for ; ; j++ { // special found a byte that ends the plain run
			switch c := s[j]; {
			case c == '"':
				return j + 1, seen&highs == 0
			case c < ' ' || c == '\\':
				return escapedStringEnd(text, i), false
			default:
				seen |= uint64(c)
			}
		}
	}
	// Nearly every longer string is plain too: its first quote ends it, and
	// the bytes before are a plain run with no backslash. All three searches
	// read a word or more at a time. A string that is not plain is read again.
	if seen&highs == 0 {
		if q := strings.IndexByte(s[j:], '"'); q >= 0 {
			if run := s[j : j+q]; ascii.PlainPrefix(run) == q && strings.IndexByte(run, '\\') < 0 {
				return j + q + 1, true
			}
		}
	}
	return escapedStringEnd(text, i), false
}

// word returns the eight bytes of s from i on, the first in the low byte.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), len(s))[i:])
}

// asString views text as a string without copying it: a slice's header
// starts as a string's does. The view lives no longer than the call.
func asString[T ~string | ~[]byte](text T) string {
	return *(*string)(unsafe.Pointer(&text))
}

// escapedStringEnd is stringEnd for a string that is not plain.
func escapedStringEnd[T ~string | ~[]byte](text T, i int) int {
	for ; i < len(text); i++ {
		// The plain run of a string, eight bytes at a time, then byte by byte.
		for i+8 <= len(text) && !special(word(asString(text), i)) {
			i += 8
		}
		for i < len(text) && text[i] >= ' ' && text[i] != '"' && text[i] != '\\' {
			i++
		}
		if i == len(text) {
			return -1
		}
		switch c := text[i]; {
		case c == '"':
			return i + 1
		case c < ' ':
			return -1
		case c == '\\':
			i++
			if i >= len(text) {
				return -1
			}
			switch text[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(text) {
					return -1
				}
				for j := i + 1; j <= i+4; j++ {
					if h := text[j]; !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// numberEnd returns the index after the number starting at i, or -1.
func numberEnd[T ~string | ~[]byte](text T, i int) int {
	n := len(text)
	if text[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < n && text[i] >= '0' && text[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < n && text[i] == '0':
		i++
	case !digits():
		return -1
	}
	if i < n && text[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < n && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < n && (text[i] == '+' || text[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

// literalEnd returns the index after word at i, or -1.
func literalEnd[T ~string | ~[]byte](text T, i int, word string) int {
	if len(text)-i < len(word) {
		return -1
	}
	for j := range len(word) {
		if text[i+j] != word[j] {
			return -1
		}
	}
	return i + len(word)
}

// special reports whether any of the eight bytes of w is a control
// character, a quote or a backslash: what ends the plain run of a string.
// Each test is exact (the classic has-zero-byte and has-less-than tricks).
func special(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := w^(ones*'"'), w^(ones*'\\')
	return ((w-ones*' ')&^w|(q-ones)&^q|(b-ones)&^b)&highs != 0
}
