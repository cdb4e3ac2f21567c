package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRetriesExample runs the example against fanout in-process on a
// manual clock and checks the attempts and the dead-lettered message.
func TestRetriesExample(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, []string{"--endpoint="}, &out); err != nil { // in-process even if FANOUT_ENDPOINT is set
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	t.Log("\n" + got)
	for _, want := range []string{
		"started fanout in-process on a manual clock\n",
		"advanced the clock by 25s\n",
		"delivery dead-lettered after 4 attempts:\n",
		"  attempt 1 at +0s: failed (HTTP 503)\n",
		"  attempt 2 at +0s: failed (HTTP 503)\n",
		"  attempt 3 at +10s: failed (HTTP 503)\n",
		"  attempt 4 at +25s: failed (HTTP 503)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^dead-letter queue holds Notification [0-9a-f-]{36}: \{"payment":"p-1","amount":25\}$`).MatchString(got) {
		t.Error("no dead-lettered message in the output")
	}
}

func TestBadFlag(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"--nope"}, &strings.Builder{}); err == nil {
		t.Fatal("unknown flag accepted")
	}
}
