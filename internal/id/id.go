// Package id makes the random identifiers AWS hands out (message ids,
// request ids, receipt-handle nonces) and checks account ids.
package id

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"sync"
)

// generators hand out cryptographically strong random bytes faster than a
// getrandom call per id: ChaCha8 generators, each seeded from crypto/rand,
// one per goroutine at a time. A message id costs a few nanoseconds instead
// of about a hundred, ten times over for a batch or an SNS fan-out.
var generators = sync.Pool{New: func() any {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read never fails on supported platforms
	return mrand.NewChaCha8(seed)
}}

// random16 fills b with random bytes.
func random16(b *[16]byte) {
	g := generators.Get().(*mrand.ChaCha8)
	binary.LittleEndian.PutUint64(b[:8], g.Uint64())
	binary.LittleEndian.PutUint64(b[8:], g.Uint64())
	generators.Put(g)
}

// UUID returns a random (version 4) UUID in its canonical text form.
func UUID() string {
	var out [36]byte
	PutUUID(&out)
	return string(out[:])
}

// PutUUID writes a random (version 4) UUID into dst, for callers that build
// one string out of several parts.
func PutUUID(dst *[36]byte) {
	var b [16]byte
	NewRaw(&b)
	Format(dst, &b)
}

// NewRaw fills b with a random (version 4) UUID's 16 bytes, for callers
// that keep ids as bytes and show them as text later (Format).
func NewRaw(b *[16]byte) {
	random16(b)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
}

// Format writes b's canonical text form (lower-case, 8-4-4-4-12) into dst.
func Format(dst *[36]byte, b *[16]byte) {
	be := binary.BigEndian
	be.PutUint64(dst[0:8], hex8(be.Uint32(b[0:4])))
	w := hex8(be.Uint32(b[4:8]))
	dst[8] = '-'
	be.PutUint32(dst[9:13], uint32(w>>32))
	dst[13] = '-'
	be.PutUint32(dst[14:18], uint32(w))
	w = hex8(be.Uint32(b[8:12]))
	dst[18] = '-'
	be.PutUint32(dst[19:23], uint32(w>>32))
	dst[23] = '-'
	be.PutUint32(dst[24:28], uint32(w))
	be.PutUint64(dst[28:36], hex8(be.Uint32(b[12:16])))
}

// Hex writes src as lower-case hexadecimal into dst (2*len(src) bytes), as
// hex.Encode does, four bytes at a time: every receive writes the text of
// each message's id and MD5 from their bytes.
func Hex(dst, src []byte) {
	dst = dst[:2*len(src)]
	for len(src) >= 4 {
		binary.BigEndian.PutUint64(dst, hex8(binary.BigEndian.Uint32(src)))
		dst, src = dst[8:], src[4:]
	}
	const digits = "0123456789abcdef"
	for i, c := range src {
		dst[2*i], dst[2*i+1] = digits[c>>4], digits[c&15]
	}
}

// hex8 is v's eight hexadecimal digits, the first in the top byte: each
// nibble spread into a byte of its own, then '0' added, and 'a'-'0'-10
// more where the nibble is 10 or over (where adding 6 carries into bit 4).
func hex8(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}

// Parse reads a UUID in exactly the form Format writes into b, so that
// Format gives s back; ok is false for any other string.
func Parse(b *[16]byte, s string) (ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	return LowerHex(b[0:4], s[0:8]) && LowerHex(b[4:6], s[9:13]) && LowerHex(b[6:8], s[14:18]) &&
		LowerHex(b[8:10], s[19:23]) && LowerHex(b[10:], s[24:])
}

// LowerHex decodes s, lower-case hexadecimal of len(dst) bytes, into dst;
// ok is false if s is anything else (upper case included), so that
// hex.Encode gives s back.
func LowerHex(dst []byte, s string) (ok bool) {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, lo := nibble(s[2*i]), nibble(s[2*i+1])
		if hi > 15 || lo > 15 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func nibble(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return 255
}

// IsAccount reports whether s is an AWS account id: 12 digits.
func IsAccount(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
