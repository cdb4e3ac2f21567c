package id

import (
	"encoding/hex"
	"regexp"
	"testing"
)

func TestUUIDIsVersion4(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		u := UUID()
		if !re.MatchString(u) {
			t.Fatalf("%q is not a v4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("duplicate %q", u)
		}
		seen[u] = true
	}
}

func BenchmarkUUID(b *testing.B) {
	for b.Loop() {
		_ = UUID()
	}
}

func BenchmarkPutUUID(b *testing.B) {
	var out [36]byte
	for b.Loop() {
		PutUUID(&out)
	}
}

func TestParseGivesFormatBack(t *testing.T) {
	t.Parallel()
	for i := 0; i < 1000; i++ {
		u := UUID()
		var b [16]byte
		if !Parse(&b, u) {
			t.Fatalf("Parse(%q) failed", u)
		}
		var out [36]byte
		Format(&out, &b)
		if string(out[:]) != u {
			t.Fatalf("Format(Parse(%q)) = %q", u, out[:])
		}
	}
	for _, bad := range []string{
		"", "0f8fad5b-d9cb-469f-a165-70867728950", "0F8FAD5B-D9CB-469F-A165-70867728950E",
		"0f8fad5b-d9cb-469f-a165-70867728950g", "0f8fad5bd-9cb-469f-a165-70867728950e",
		"0f8fad5b-d9cb-469f-a165-70867728950e0",
	} {
		var b [16]byte
		if Parse(&b, bad) {
			t.Errorf("Parse(%q) accepted a non-canonical UUID", bad)
		}
	}
}

func TestLowerHex(t *testing.T) {
	t.Parallel()
	var b [2]byte
	if !LowerHex(b[:], "0fa9") || b != [2]byte{0x0f, 0xa9} {
		t.Fatalf("LowerHex(0fa9) = %x", b)
	}
	for _, bad := range []string{"0FA9", "0fa", "0fa99", "0fz9"} {
		if LowerHex(b[:], bad) {
			t.Errorf("LowerHex(%q) accepted it", bad)
		}
	}
}

// Hex and Format write what encoding/hex does, for every byte value.
func TestHexIsEncodingHex(t *testing.T) {
	t.Parallel()
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i)
	}
	for n := range 20 { // every tail length after the four-byte steps
		got := make([]byte, 2*(len(src)-n))
		Hex(got, src[n:])
		if want := hex.EncodeToString(src[n:]); string(got) != want {
			t.Fatalf("Hex of %d bytes: %s, want %s", len(src)-n, got, want)
		}
	}
	for i := 0; i < 256; i += 16 {
		b := [16]byte(src[i : i+16])
		var out [36]byte
		Format(&out, &b)
		h := hex.EncodeToString(b[:])
		if want := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]; string(out[:]) != want {
			t.Fatalf("Format(%x) = %s, want %s", b, out, want)
		}
	}
}

var formatSink [36 + 32]byte

// BenchmarkFormatIDs is what a receive spends writing a message's id and
// MD5 as text.
func BenchmarkFormatIDs(b *testing.B) {
	var u, sum [16]byte
	NewRaw(&u)
	NewRaw(&sum)
	for b.Loop() {
		Format((*[36]byte)(formatSink[:36]), &u)
		Hex(formatSink[36:], sum[:])
	}
}
