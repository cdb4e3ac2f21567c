package main

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout"
)

// TestSoakBriefly is the soak of --soak, a few seconds long, against fanout
// in-process: 64 clients, no violation, no 5xx, everything drained.
func TestSoakBriefly(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of load")
	}
	ctx := context.Background()
	srv, err := fanout.Start(ctx, fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	probe := func(context.Context) (int64, int) {
		rss, err := processRSS(os.Getpid())
		if err != nil {
			rss = -1
		}
		return rss, runtime.NumGoroutine()
	}
	var out bytes.Buffer
	o := soakOptions{duration: 3 * time.Second, sample: time.Second, drain: time.Minute, clients: 64, size: 200, window: 500}
	res, err := runSoak(ctx, srv.URL(), "t-", o, probe, &out)
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	if res.violations() != 0 || res.status5xx() != 0 || !res.Drained || res.errors() != 0 {
		t.Fatalf("soak failed:\n%s", report)
	}
	for _, op := range []string{"SendMessage", "SendMessageBatch", "Publish", "Publish(fifo)", "ReceiveMessage", "DeleteMessageBatch",
		"ChangeMessageVisibilityBatch", "GET /_fanout/sqs/queues", "ListDeadLetterSourceQueues"} {
		if res.Ops[op].calls.Load() == 0 {
			t.Errorf("no %s calls:\n%s", op, report)
		}
	}
	if res.Tally.acked == 0 || res.Tally.groups == 0 || len(res.Samples) < 3 || !strings.Contains(report, "soak PASS") {
		t.Errorf("report:\n%s", report)
	}
	t.Log("\n" + report)
}

// The checks themselves catch what they look for.
func TestSoakLedgerCatchesViolations(t *testing.T) {
	now := time.Now()
	vis := time.Minute
	l := newLedger()
	l.ack(1, 2, 3)
	l.deleting(1)
	l.deleting(4) // before its acknowledgement
	l.ack(4)
	l.deleting(1) // again
	l.deleting(4) // again, after overtaking its acknowledgement
	l.deleting(9) // never acknowledged
	tl := l.tally()
	if tl.lost != 2 || tl.dups != 2 || tl.early != 1 || tl.acked != 4 {
		t.Errorf("at-least-once: %+v", tl)
	}

	l = newLedger()
	l.fifoReceived(now, vis, []fifoMsg{{"a", 1}, {"a", 2}, {"b", 1}})
	l.fifoRelease("a", 2)
	l.fifoRelease("b", 0)                                   // made visible again: 1 comes next
	l.fifoReceived(now, vis, []fifoMsg{{"b", 1}, {"a", 3}}) // fine
	l.fifoReceived(now, vis, []fifoMsg{{"a", 4}})           // a is held: in flight twice
	l.fifoRelease("a", 4)
	l.fifoReceived(now, vis, []fifoMsg{{"a", 6}}) // 5 skipped
	l.fifoRelease("a", 6)
	l.fifoReceived(now.Add(2*vis), vis, []fifoMsg{{"b", 1}}) // b's holder outlived its visibility: allowed
	// 4 while 3 is held is out of order too.
	if tl := l.tally(); tl.order != 2 || tl.inflight != 1 || tl.expired != 1 || len(tl.samples) != 3 {
		t.Errorf("FIFO: %+v", tl)
	}

	k, m, ok := parseSoakBody(soakBody(12345, "p1-2", 7, payload(100)))
	if !ok || k != 12345 || m != (fifoMsg{"p1-2", 7}) {
		t.Errorf("body round trip: %d %+v %v", k, m, ok)
	}
	if _, _, ok := parseSoakBody("hello"); ok {
		t.Error("a foreign body parsed")
	}
}
