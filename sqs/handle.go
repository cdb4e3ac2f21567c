package sqs

import (
	"encoding/base64"
	"encoding/binary"
)

// A receipt handle names one receive of one message: the queue's random
// incarnation id (so handles die with the queue), the message's sequence in
// the queue and the receive generation. It is opaque to clients.
const handleLen = 8 + 8 + 4

// handleText is the length of an encoded handle.
const handleText = (handleLen*8 + 5) / 6 // unpadded base64

// putHandle writes the handle into dst, handleText bytes.
func putHandle(dst []byte, queueUID, seq uint64, gen uint32) {
	var b [handleLen]byte
	binary.BigEndian.PutUint64(b[0:], queueUID)
	binary.BigEndian.PutUint64(b[8:], seq)
	binary.BigEndian.PutUint32(b[16:], gen)
	base64.RawURLEncoding.Encode(dst, b[:])
}

func decodeHandle(h string) (queueUID, seq uint64, gen uint32, ok bool) {
	if base64.RawURLEncoding.DecodedLen(len(h)) != handleLen {
		return 0, 0, 0, false
	}
	var b [handleLen]byte
	n, err := base64.RawURLEncoding.Decode(b[:], []byte(h))
	if err != nil || n != handleLen {
		return 0, 0, 0, false
	}
	return binary.BigEndian.Uint64(b[0:]), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint32(b[16:]), true
}
