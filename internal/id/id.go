// Package id makes the random identifiers AWS hands out (message ids,
// request ids, receipt-handle nonces) and checks account ids.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
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
	random16(&b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	out := dst
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
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
