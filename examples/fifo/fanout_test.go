package main

// The test a user would write for a FIFO topic feeding a FIFO queue.

import (
	"context"
	"slices"
	"testing"

	"github.com/fanout/fanout/fanouttest"
	"github.com/fanout/fanout/sqs"
)

func TestFifoTopicKeepsOrderPerGroupAndDeduplicates(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	ctx := context.Background()
	topicArn, _, err := setUp(ctx, srv.SNSClient(), srv.SQSClient(), "events.fifo")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if err := publish(ctx, srv.SNSClient(), topicArn, e); err != nil {
			t.Fatal(err)
		}
	}
	msgs := srv.Peek("events.fifo")
	var ada []string
	seq := ""
	for _, m := range msgs {
		for _, a := range m.Attributes {
			if a.Name == sqs.SysMessageGroupID && a.Value == "ada" {
				ada = append(ada, m.Body)
			}
			if a.Name == sqs.SysSequenceNumber {
				if a.Value == "" || (seq != "" && m.Body[:3] == "ada" && a.Value <= seq) {
					t.Errorf("sequence number %q after %q", a.Value, seq)
				}
				if m.Body[:3] == "ada" {
					seq = a.Value
				}
			}
		}
	}
	if !slices.Equal(ada, []string{"ada: created", "ada: paid", "ada: shipped"}) {
		t.Fatalf("ada's group = %q (all: %+v)", ada, msgs)
	}
	if len(msgs) != 5 {
		t.Fatalf("%d messages, want 5: the duplicate publish is dropped", len(msgs))
	}
}
