package sqs

import (
	"strings"
	"testing"
)

// TestMD5OfBodyCopiesNothing: the digest of a body is the MD5 SQS gives
// (RFC 1321's test vector), and hashing a 1 KiB body allocates only the
// 32-character answer, not a copy of the body (an SNS publish hashes each
// message it fans out to queues). The FIFO content-based deduplication id,
// hashed the same way, is the SHA-256 of the body.
func TestMD5OfBodyCopiesNothing(t *testing.T) {
	if got := MD5OfBody("message digest"); got != "f96b697d7cb7938d525a2f31aaf161d0" {
		t.Fatalf("MD5OfBody = %s", got)
	}
	body := strings.Repeat("x", 1024)
	if n := testing.AllocsPerRun(100, func() { MD5OfBody(body) }); n > 1 {
		t.Errorf("MD5OfBody allocates %v times for a 1 KiB body, want 1", n)
	}
	if got := contentDedupID("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("contentDedupID = %s, want FIPS 180-2's SHA-256 of abc", got)
	}
}
