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
