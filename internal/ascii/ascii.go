// Package ascii finds the plain run at the start of a text: the bytes from
// space (0x20) to DEL (0x7f). It is the fast path of the scans fanout makes
// over message text, where nearly every byte is plain and only the rest
// needs a closer look: JSON strings (which cannot carry a raw control
// character) and SQS's rule for the characters of a body.
package ascii

import (
	"encoding/binary"
	"unsafe"
)

// PlainPrefix returns the length of the longest prefix of s whose bytes are
// all from 0x20 to 0x7f.
func PlainPrefix(s string) int {
	// A word holds only plain bytes when no byte has its high bit set, and
	// subtracting 0x20 from each borrows from none. A word that fails may
	// still start with plain bytes: the byte loop finds where they end.
	const high, spaces = 0x8080808080808080, 0x2020202020202020
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read-only view
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w0, w1 := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		w2, w3 := binary.LittleEndian.Uint64(b[i+16:]), binary.LittleEndian.Uint64(b[i+24:])
		if (w0|(w0-spaces)|w1|(w1-spaces)|w2|(w2-spaces)|w3|(w3-spaces))&high != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if w := binary.LittleEndian.Uint64(b[i:]); (w|(w-spaces))&high != 0 {
			break
		}
	}
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x80 {
		i++
	}
	return i
}
