package api

import (
	"slices"
	"strings"
	"testing"
)

// pathTail cuts a path as strings.Split does, without allocating.
func TestPathTailIsSplit(t *testing.T) {
	for _, p := range []string{"", "q", "000000000000/q", "queue/eu-west-1/000000000000/q", "a//b", "x/queue/us-east-1/1/q", "/", "a/"} {
		want := strings.Split(p, "/")
		last, n := pathTail(p)
		if n != len(want) {
			t.Fatalf("%q: %d segments, want %d", p, n, len(want))
		}
		slices.Reverse(want)
		for i := range min(n, 4) {
			if last[i] != want[i] {
				t.Fatalf("%q: segment %d from the end is %q, want %q", p, i, last[i], want[i])
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { pathTail("queue/eu-west-1/000000000000/q") }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func TestURLRegion(t *testing.T) {
	for raw, want := range map[string]string{
		"https://sqs.eu-west-1.amazonaws.com/000000000000/q":                    "eu-west-1",
		"http://eu-west-2.queue.localhost.localstack.cloud:4566/000000000000/q": "eu-west-2",
		"http://localhost:4566/000000000000/q":                                  "",
		"http://sqs.eu-west-1/000000000000/q":                                   "",
		"http://sqs.eu-west-1./q":                                               "eu-west-1",
		"http://sqs.nowhere.amazonaws.com/q":                                    "",
		"http://127.0.0.1:4566/000000000000/q":                                  "",
	} {
		if got := urlRegion(raw); got != want {
			t.Errorf("urlRegion(%q) = %q, want %q", raw, got, want)
		}
	}
}
