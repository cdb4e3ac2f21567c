package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRedriveExample(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, []string{"--endpoint="}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"round 1: done [job 1 job 2], failed [poison]\n",
		"round 2: done [], failed [poison]\n",
		"round 3: done [], failed []\n", // dead-lettered on this receive
		"after the redrive: done [poison], failed []\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
