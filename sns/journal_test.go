package sns

import (
	"strconv"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
)

// countJournal counts what it is told and stores nothing.
type countJournal struct{ changes int }

func (j *countJournal) Record(Change) Waiter { j.changes++; return nil }

func benchPublish(b *testing.B, fifo bool, j Journal) {
	e := New(Options{Clock: clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), Journal: j})
	name, attrs := "t", map[string]string(nil)
	if fifo {
		name, attrs = "t.fifo", map[string]string{AttrFifoTopic: "true", AttrContentBasedDeduplication: "true"}
	}
	tp, err := e.CreateTopic(name, attrs, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Subscribe(SubscribeInput{TopicArn: tp.Arn(), Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q" + map[bool]string{true: ".fifo"}[fifo]}); err != nil {
		b.Fatal(err)
	}
	msg := "hello"
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in := PublishInput{TopicArn: tp.Arn(), Message: &msg}
		if fifo {
			in.GroupID, in.DedupID = "g", "d"+strconv.Itoa(i)
		}
		if _, err := e.Publish(in); err != nil {
			b.Fatal(err)
		}
	}
}

// Without a journal, publishing costs what it did before durability.
func BenchmarkPublish(b *testing.B) {
	b.Run("standard", func(b *testing.B) { benchPublish(b, false, nil) })
	b.Run("fifo", func(b *testing.B) { benchPublish(b, true, nil) })
	b.Run("fifo-journal", func(b *testing.B) { benchPublish(b, true, &countJournal{}) })
}

func TestStandardPublishRecordsNothing(t *testing.T) {
	j := &countJournal{}
	e := New(Options{Journal: j})
	tp, err := e.CreateTopic("t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := j.changes
	msg := "m"
	if _, err := e.Publish(PublishInput{TopicArn: tp.Arn(), Message: &msg}); err != nil {
		t.Fatal(err)
	}
	if j.changes != before {
		t.Errorf("a standard topic's publish recorded %d changes, want none", j.changes-before)
	}
}
