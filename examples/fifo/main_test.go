package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestFifoExample(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, []string{"--endpoint="}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"ada, in order: ada: created, ada: paid, ada: shipped\n",
		"grace, in order: grace: created, grace: paid\n",
		"published 6, received 5 (the duplicate was dropped)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
