package sqs

import (
	"encoding/base64"
	"encoding/binary"
)

// A receipt handle names one receive of one message: the queue's random
// incarnation id (so handles die with the queue), the message's sequence in
// the queue and the receive generation. It is opaque to clients.
//
// Its first byte is a fixed version, 1, so every handle starts with "A",
// as AWS's do: a handle that began with "-" (one queue in 64 had such
// handles) would be taken for an option by the AWS CLI ("argument
// --receipt-handle: expected one argument").
const (
	handleVersion = 1
	handleLen     = 1 + 8 + 8 + 4
)

// handleText is the length of an encoded handle.
const handleText = (handleLen*8 + 5) / 6 // unpadded base64

// putHandle writes the handle into dst, handleText bytes.
func putHandle(dst []byte, queueUID, seq uint64, gen uint32) {
	var b [handleLen]byte
	b[0] = handleVersion
	binary.BigEndian.PutUint64(b[1:], queueUID)
	binary.BigEndian.PutUint64(b[9:], seq)
	binary.BigEndian.PutUint32(b[17:], gen)
	base64.RawURLEncoding.Encode(dst, b[:])
}

func decodeHandle(h string) (queueUID, seq uint64, gen uint32, ok bool) {
	if len(h) != handleText {
		return 0, 0, 0, false
	}
	var b [handleLen]byte
	n, err := base64.RawURLEncoding.Decode(b[:], []byte(h))
	if err != nil || n != handleLen || b[0] != handleVersion {
		return 0, 0, 0, false
	}
	return binary.BigEndian.Uint64(b[1:]), binary.BigEndian.Uint64(b[9:]), binary.BigEndian.Uint32(b[17:]), true
}
