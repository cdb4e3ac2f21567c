package id

import (
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
