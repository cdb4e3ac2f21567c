package sqs

import (
	"math"
	"testing"

	"github.com/fanout/fanout/clock"
)

// A record is half of what a small message takes in memory (its bytes in a
// chunk are the other half), so a field it gains must be worth that.
func TestRecordStaysSmall(t *testing.T) {
	if recordSize > 88 {
		t.Fatalf("a record is %d bytes, more than 88", recordSize)
	}
}

// The delivery order is kept as a distance from seq: exact within four
// billion sends, clamped past that, never before the record's own seq.
func TestRecordOrderIsSeqPlusLater(t *testing.T) {
	r := record{seq: 1 << 40}
	for _, c := range []struct{ set, want uint64 }{
		{1 << 40, 1 << 40},
		{1<<40 + 7, 1<<40 + 7},
		{1<<40 + math.MaxUint32, 1<<40 + math.MaxUint32},
		{1<<40 + math.MaxUint32 + 1, 1<<40 + math.MaxUint32},
		{1<<40 - 1, 1 << 40},
	} {
		r.setOrder(c.set)
		if got := r.order(); got != c.want {
			t.Errorf("setOrder(%d): order %d, want %d", c.set, got, c.want)
		}
	}
}

// A standard queue whose redrive allows more than three receives sends a
// message received three times to the back: a message sent after it, never
// received, goes out first.
func TestThirdReceiveSendsToTheBack(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	dlq := mustQueue(t, e, "back-dlq", nil)
	q := mustQueue(t, e, "back", redriveTo(dlq, 5))
	first, second := send(t, q, "first"), send(t, q, "second")
	for i := range 3 {
		got := receive(t, q, ReceiveInput{VisibilityTimeout: ptr(0)})
		if len(got) != 1 || got[0].MessageID != first.MessageID {
			t.Fatalf("receive %d: %+v, want the first message", i+1, got)
		}
	}
	for _, want := range []SendResult{second, first} {
		got := receive(t, q, ReceiveInput{VisibilityTimeout: ptr(30)})
		if len(got) != 1 || got[0].MessageID != want.MessageID {
			t.Fatalf("after the third receive: %+v, want %s", got, want.MessageID)
		}
	}
}

// A receipt handle names the receive by the message's receives from its
// queue, which a restart keeps: the handle a receive gave before it still
// deletes, and one of an earlier receive does not. A status recorded with
// a HandleGen that does not match its counts keeps its HandleGen.
func TestRestoredHandlesStayValid(t *testing.T) {
	t.Parallel()
	good := "0f8fad5b-d9cb-469f-a165-70867728950e"
	for _, st := range []MessageStatus{
		{ReceiveCount: 3, ReceivesBefore: 1, HandleGen: 2}, // dead-lettered after one receive, received twice since
		{ReceiveCount: 3, ReceivesBefore: 0, HandleGen: 2},
	} {
		clk := clock.NewManual(epoch)
		r := NewRestorer()
		r.Queue(QueueState{Name: "q", UID: 77})
		st.Queue, st.Seq, st.Order, st.State = "q", 5, 5, MessageInflight
		st.VisibleAt = epoch.Add(60e9).UnixNano()
		st.ReceivedAt = epoch.UnixNano()
		if err := r.Message(MessageRecord{Queue: "q", Seq: 5, Body: "x", MessageID: good, MD5OfBody: MD5OfBody("x"), SentAt: epoch.UnixNano(), Status: st}); err != nil {
			t.Fatal(err)
		}
		e := New(Options{Clock: clk})
		t.Cleanup(e.Close)
		if err := r.Into(e); err != nil {
			t.Fatal(err)
		}
		q, _ := e.Queue("q")
		handle := func(gen uint32) string {
			b := make([]byte, handleText)
			putHandle(b, q.uid, 5, gen)
			return string(b)
		}
		if err := q.Delete(handle(st.HandleGen - 1)); err != nil {
			t.Fatal(err)
		}
		if n := attr(t, q, AttrApproximateNotVisible); n != "1" {
			t.Fatalf("%+v: an earlier receive's handle deleted the message (%s in flight)", st, n)
		}
		if err := q.Delete(handle(st.HandleGen)); err != nil {
			t.Fatal(err)
		}
		if n := attr(t, q, AttrApproximateNotVisible); n != "0" {
			t.Errorf("%+v: the last receive's handle left %s in flight", st, n)
		}
	}
}
