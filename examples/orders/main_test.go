package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestOrdersFanout runs the example against fanout in-process (queue
// policies enforced) and checks what each consumer received.
func TestOrdersFanout(t *testing.T) {
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
		"started fanout in-process (queue policies enforced)\n",
		"topic arn:aws:sns:us-east-1:000000000000:order-placed\n",
		"subscribed queue email with filter policy {\"customer_type\":[\"registered\"]}\n",
		"fulfillment received 3: order 1001, order 1002, order 1003\n",
		"inventory received 3: order 1001, order 1002, order 1003\n",
		"email received 2: order 1001, order 1003\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^published order \d+ \((registered|guest) customer\) as message [0-9a-f-]{36}$`).FindAllString(got, -1)); n != 3 {
		t.Errorf("%d orders published", n)
	}
}

func TestBadFlag(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"--nope"}, &strings.Builder{}); err == nil {
		t.Fatal("unknown flag accepted")
	}
}
