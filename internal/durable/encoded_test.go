package durable

import (
	"fmt"
	"testing"

	"github.com/fanout/fanout/sqs"
)

// An encoded back in the pool holds no slices of earlier changes, even
// after a long change and then a shorter one, although release only
// clears what the last one wrote.
func TestEncodedKeepsNoStaleRecords(t *testing.T) {
	t.Parallel()
	change := func(n int) sqs.Change {
		var c sqs.Change
		for i := range n {
			c.Messages = append(c.Messages, sqs.MessageRecord{Queue: "q", Seq: uint64(i),
				MessageID: fmt.Sprintf("%036d", i), MD5OfBody: fmt.Sprintf("%032d", i), Body: "b"})
		}
		return c
	}
	e := new(encoded)
	for _, n := range []int{40, 7, 3} {
		recs, err := e.sqsRecords("sqs/a/r/", change(n))
		if err != nil || len(recs) != n {
			t.Fatalf("%d messages: %d records, %v", n, len(recs), err)
		}
	}
	e.clearForPool()
	for i, r := range e.recs[:cap(e.recs)] {
		if r.Key != nil || r.Value != nil {
			t.Fatalf("record %d of %d kept %q", i, cap(e.recs), r.Key)
		}
	}
}
