// Package id makes the random identifiers AWS hands out (message ids,
// request ids, receipt-handle nonces) and checks account ids.
package id

import (
	"crypto/rand"
	"encoding/hex"
)

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
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
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
