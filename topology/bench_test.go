package topology_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/topology"
)

// bigFile is the measured topology: 1,000 queues (a tenth with a DLQ),
// 100 topics and 2,000 subscriptions, each with a filter policy.
func bigFile() []byte {
	var b strings.Builder
	b.WriteString("queues:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "  q%04d:\n    attributes: {VisibilityTimeout: %d, MessageRetentionPeriod: 86400}\n", i, 30+i%60)
		if i%10 == 1 {
			fmt.Fprintf(&b, "    redrive: {deadLetterQueue: q%04d, maxReceiveCount: 5}\n", i-1)
		}
	}
	b.WriteString("topics:\n")
	for t := 0; t < 100; t++ {
		fmt.Fprintf(&b, "  t%03d:\n    attributes: {DisplayName: topic %d}\n    subscriptions:\n", t, t)
		for s := 0; s < 20; s++ {
			q := (t*20 + s) % 1000
			fmt.Fprintf(&b, "      - queue: q%04d\n        filterPolicy: {event_type: [order_placed, order_%d], amount: [{numeric: [\">\", %d]}], region: [{prefix: eu-}]}\n", q, s, s)
		}
	}
	return []byte(b.String())
}

// BenchmarkLoad is a start with --config: parse, validate on scratch
// engines, create everything on a new server.
func BenchmarkLoad(b *testing.B) {
	data := bigFile()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		top, err := topology.Parse(data, "big.yaml")
		if err != nil {
			b.Fatal(err)
		}
		srv, err := fanout.New(fanout.Options{Topology: top})
		if err != nil {
			b.Fatal(err)
		}
		_ = srv.Close()
	}
}

// BenchmarkExport exports the same topology as YAML.
func BenchmarkExport(b *testing.B) {
	top, err := topology.Parse(bigFile(), "big.yaml")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := fanout.New(fanout.Options{Topology: top})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	e := topology.Engines{SQS: srv.SQS(), SNS: srv.SNS()}
	for b.Loop() {
		t, err := topology.Export(e)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.YAML(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBigFileRoundTrips keeps the benchmark's file honest: it loads, and
// exports to the same counts.
func TestBigFileRoundTrips(t *testing.T) {
	t.Parallel()
	top, err := topology.Parse(bigFile(), "big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, fanout.Options{Topology: top})
	back, err := topology.Export(engines(srv))
	if err != nil {
		t.Fatal(err)
	}
	subs := 0
	for _, tp := range back.Topics {
		subs += len(tp.Subscriptions)
	}
	if len(back.Queues) != 1000 || len(back.Topics) != 100 || subs != 2000 {
		t.Errorf("exported %d queues, %d topics, %d subscriptions", len(back.Queues), len(back.Topics), subs)
	}
}
