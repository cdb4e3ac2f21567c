package awswire

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/fanout/fanout/internal/ascii"
)

// AppendJSONString appends s as a JSON string. Replies on hot paths are
// written by hand with it: encoding/json's reflection costs more than the
// rest of a SendMessage. Invalid UTF-8 becomes U+FFFD, as encoding/json
// does, so that a reply is always valid JSON.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// Most strings need nothing escaped: plain ASCII with no quote and no
	// backslash, which three word-wide searches tell. Any other string is
	// read by the loop below; the quote is looked for first, as a body that
	// is itself JSON has one at once.
	if strings.IndexByte(s, '"') < 0 && strings.IndexByte(s, '\\') < 0 && ascii.PlainPrefix(s) == len(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read-only view
	last := 0
	for i := 0; i < len(s); {
		// A message body is mostly plain ASCII: skip it eight bytes at a
		// time; a word that may hold a byte to escape or to decode (a
		// false alarm costs only the byte loop below) is read byte by byte.
		for i+8 <= len(s) && !needsCare(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size > 1 {
				i += size
				continue
			}
			dst = append(dst, s[last:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			last = i
			continue
		}
		dst = append(dst, s[last:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		last = i
	}
	dst = append(dst, s[last:]...)
	return append(dst, '"')
}

// needsCare reports whether the eight bytes of w may hold one that a JSON
// string cannot carry as is: below 0x20, a quote, a backslash, or one of
// UTF-8's (0x80 and up). It never misses one; it may flag a plain word.
func needsCare(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := w^(ones*'"'), w^(ones*'\\')
	return (w|(w-ones*' ')|(q-ones)&^q|(b-ones)&^b)&highs != 0
}

// JSONObject appends the members of one JSON object, handling commas.
type JSONObject struct {
	Buf []byte
	n   []int // members written, per open object
}

// Reset empties o for another reply, keeping its buffers.
func (o *JSONObject) Reset() {
	o.Buf, o.n = o.Buf[:0], o.n[:0]
}

// Open starts an object (as a value: write the key first with Key).
func (o *JSONObject) Open() {
	o.Buf = append(o.Buf, '{')
	o.n = append(o.n, 0)
}

// Close ends the innermost object.
func (o *JSONObject) Close() {
	o.Buf = append(o.Buf, '}')
	o.n = o.n[:len(o.n)-1]
}

// Key writes a member name (and the comma before it when needed).
func (o *JSONObject) Key(k string) {
	if o.n[len(o.n)-1] > 0 {
		o.Buf = append(o.Buf, ',')
	}
	o.n[len(o.n)-1]++
	o.Buf = AppendJSONString(o.Buf, k)
	o.Buf = append(o.Buf, ':')
}

// String writes "k":"v".
func (o *JSONObject) String(k, v string) {
	o.Key(k)
	o.Buf = AppendJSONString(o.Buf, v)
}

// Int writes "k":n.
func (o *JSONObject) Int(k string, n int64) {
	o.Key(k)
	o.Buf = strconv.AppendInt(o.Buf, n, 10)
}

// Bool writes "k":true|false.
func (o *JSONObject) Bool(k string, b bool) {
	o.Key(k)
	o.Buf = strconv.AppendBool(o.Buf, b)
}

// OpenArray writes "k":[ ; items are written with Item and objects.
func (o *JSONObject) OpenArray(k string) {
	o.Key(k)
	o.Buf = append(o.Buf, '[')
	o.n = append(o.n, 0)
}

// Item starts an array element (writing the comma before it when needed).
func (o *JSONObject) Item() {
	if o.n[len(o.n)-1] > 0 {
		o.Buf = append(o.Buf, ',')
	}
	o.n[len(o.n)-1]++
}

// CloseArray ends the innermost array.
func (o *JSONObject) CloseArray() {
	o.Buf = append(o.Buf, ']')
	o.n = o.n[:len(o.n)-1]
}
