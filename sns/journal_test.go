package sns

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
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

// orderJournal is an engine's Journal and Deliverer at once: it keeps, in
// order, the dedup ids and archived copies recorded and the deliveries
// made, and at each delivery what a compaction would keep of its dedup id.
type orderJournal struct {
	e      *Engine
	events []string
	fail   int // deliveries whose record fails
}

type failedWait struct{}

func (failedWait) Wait() error { return errors.New("disk full") }

func (j *orderJournal) Record(c Change) Waiter {
	for _, d := range c.Dedup {
		j.events = append(j.events, "dedup "+d.Key)
	}
	for _, a := range c.Archived {
		j.events = append(j.events, "archived "+a.DedupID)
	}
	for _, d := range c.ForgottenDedup {
		j.events = append(j.events, "forgot "+d.Key)
	}
	return nil
}

func (j *orderJournal) Deliver(*delivery.Message, delivery.Subscriber) error { return nil }
func (j *orderJournal) Confirm(*delivery.Control, delivery.Subscriber)       {}

func (j *orderJournal) DeliverJournaled(m *delivery.Message, _ delivery.Subscriber) (delivery.Waiter, error) {
	j.events = append(j.events, "deliver "+m.DedupID)
	_ = j.e.Dump(func(c Change) error {
		for _, d := range c.Dedup {
			if d.Key == m.DedupID {
				j.events = append(j.events, "compaction keeps dedup "+d.Key)
			}
		}
		for _, a := range c.Archived {
			if a.DedupID == m.DedupID {
				j.events = append(j.events, "compaction keeps archived "+a.DedupID)
			}
		}
		return nil
	})
	if j.fail > 0 {
		j.fail--
		return failedWait{}, nil
	}
	return nil, nil
}

func fifoTopicWithJournal(t *testing.T) (*orderJournal, string) {
	t.Helper()
	j := &orderJournal{}
	j.e = New(Options{Clock: clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), Journal: j, Deliverer: j})
	tp, err := j.e.CreateTopic("t.fifo", map[string]string{AttrFifoTopic: "true", AttrArchivePolicy: `{"MessageRetentionPeriod":"30"}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.e.Subscribe(SubscribeInput{TopicArn: tp.Arn(), Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q.fifo"}); err != nil {
		t.Fatal(err)
	}
	return j, tp.Arn()
}

// A FIFO publish records its deduplication id (and archived copy) only
// after its deliveries, and no compaction keeps it before: a crash between
// the two used to keep the id without the delivery, so that the retry of
// the publish whose reply the crash cut off was dropped as a duplicate and
// its message was never delivered (found by internal/crashtest).
func TestFIFOPublishRecordsItsDedupIDAfterItsDeliveries(t *testing.T) {
	j, arn := fifoTopicWithJournal(t)
	msg := "m"
	if _, err := j.e.Publish(PublishInput{TopicArn: arn, Message: &msg, GroupID: "g", DedupID: "d1"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"deliver d1", "dedup d1", "archived d1"}
	if !slices.Equal(j.events, want) {
		t.Errorf("events %q, want %q", j.events, want)
	}
}

// A FIFO publish whose deliveries could not be stored answers 500 and
// forgets its deduplication id, so that the client's retry is delivered.
func TestFIFOPublishRetriedAfterItsDeliveriesFailedIsDelivered(t *testing.T) {
	j, arn := fifoTopicWithJournal(t)
	j.fail = 1
	msg := "m"
	in := PublishInput{TopicArn: arn, Message: &msg, GroupID: "g", DedupID: "d1"}
	if _, err := j.e.Publish(in); err == nil {
		t.Fatal("a publish whose delivery could not be stored succeeded")
	}
	if _, err := j.e.Publish(in); err != nil {
		t.Fatal(err)
	}
	want := []string{"deliver d1", "dedup d1", "archived d1", "forgot d1", "deliver d1", "dedup d1", "archived d1"}
	if !slices.Equal(j.events, want) {
		t.Errorf("events %q, want %q", j.events, want)
	}
}
