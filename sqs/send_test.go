package sqs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fanout/fanout/clock"
)

// SendNoReply stores, journals and refuses exactly what SendDeferred does;
// only the reply is missing.
func TestSendNoReplyStoresWhatSendStores(t *testing.T) {
	t.Parallel()
	j := newMemJournal()
	e := New(Options{Clock: clock.NewManual(epoch), Journal: j})
	t.Cleanup(e.Close)
	body := "payload é"
	in := SendInput{Body: body, BodyMD5: MD5OfBody(body), SenderID: "AIDASNS", BodyChecked: true,
		Attributes:       []MessageAttribute{{Name: "n", DataType: "Number", StringValue: "7"}},
		SystemAttributes: []MessageAttribute{{Name: "AWSTraceHeader", DataType: "String", StringValue: "Root=1-x"}}}
	deferred, quiet := mustQueue(t, e, "deferred", nil), mustQueue(t, e, "quiet", nil)
	_, w, err := deferred.SendDeferred(in)
	if err != nil || w.Wait() != nil {
		t.Fatalf("SendDeferred: %v", err)
	}
	w, err = quiet.SendNoReply(in)
	if err != nil || w == nil || w.Wait() != nil {
		t.Fatalf("SendNoReply: %v %v", w, err)
	}
	all := ReceiveInput{MaxNumberOfMessages: ptr(10), SystemAttributeNames: []string{"All"}, MessageAttributeNames: []string{"All"}}
	a, b := receive(t, deferred, all), receive(t, quiet, all)
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("received %d and %d", len(a), len(b))
	}
	if len(b[0].MessageID) != 36 || b[0].MessageID == a[0].MessageID {
		t.Fatalf("message ids %q and %q", a[0].MessageID, b[0].MessageID)
	}
	id := b[0].MessageID
	a[0].MessageID, a[0].ReceiptHandle, b[0].MessageID, b[0].ReceiptHandle = "", "", "", ""
	if !reflect.DeepEqual(a[0], b[0]) {
		t.Fatalf("SendDeferred stored\n%+v\nSendNoReply stored\n%+v", a[0], b[0])
	}
	j.mu.Lock()
	journaled := 0
	for ref, m := range j.msgs {
		if ref.Queue == "quiet" && m.MessageID == id && m.MD5OfBody == in.BodyMD5 {
			journaled++
		}
	}
	j.fail = true
	j.mu.Unlock()
	if journaled != 1 {
		t.Fatalf("%d messages of quiet journaled", journaled)
	}
	// A record that cannot be stored takes the send back.
	if w, err := quiet.SendNoReply(in); err != nil || w.Wait() == nil {
		t.Fatalf("journal failing: %v", err)
	}
	if n := attr(t, quiet, AttrApproximateNumberOfMessages); n != "0" {
		t.Fatalf("%s visible after a failed record", n)
	}
	j.mu.Lock()
	j.fail = false
	j.mu.Unlock()
	// The same refusals.
	small := mustQueue(t, e, "small", map[string]string{AttrMaximumMessageSize: "1024"})
	for _, bad := range []SendInput{{BodyMD5: in.BodyMD5}, {Body: string(make([]byte, 1025)), BodyMD5: in.BodyMD5}, {Body: "x\a", BodyMD5: in.BodyMD5}} {
		_, _, want := small.SendDeferred(bad)
		_, got := small.SendNoReply(bad)
		if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: SendNoReply %v, SendDeferred %v", bad.Body, got, want)
		}
	}
	// A FIFO queue deduplicates as ever.
	f := mustQueue(t, e, "f.fifo", map[string]string{AttrFifoQueue: "true"})
	for range 2 {
		if w, err := f.SendNoReply(SendInput{Body: body, BodyMD5: in.BodyMD5, GroupID: "g", DeduplicationID: "d"}); err != nil || w.Wait() != nil {
			t.Fatal(err)
		}
	}
	if n := attr(t, f, AttrApproximateNumberOfMessages); n != "1" {
		t.Fatalf("FIFO queue holds %s messages", n)
	}
}

// A batch's entries that fail leave no trace in the results of those that
// follow, in a buffer reused from batch to batch.
func TestSendBatchIntoReusedBufferKeepsOnlyTheSent(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "batch", nil)
	var buf SendBatchBuffer
	ids := map[string]string{} // message id: its entry's body
	for round := range 2 {
		entries := []SendBatchEntry{
			{ID: "bad1", SendInput: SendInput{Body: ""}},
			{ID: "good1", SendInput: SendInput{Body: fmt.Sprintf("one %d", round), Attributes: []MessageAttribute{{Name: "a", DataType: "String", StringValue: "v"}}}},
			{ID: "bad2", SendInput: SendInput{Body: "x", DelaySeconds: ptr(901)}},
			{ID: "good2", SendInput: SendInput{Body: fmt.Sprintf("two %d", round)}},
		}
		if round == 1 {
			entries = entries[1:] // the slots shift: a result once at 1 is now at 0
		}
		ok, failed, err := q.SendBatchInto(&buf, entries)
		if err != nil || len(ok) != 2 || ok[0].ID != "good1" || ok[1].ID != "good2" {
			t.Fatalf("round %d: ok %+v, failed %+v, %v", round, ok, failed, err)
		}
		if ok[0].MD5OfAttrs == "" || ok[1].MD5OfAttrs != "" || ok[0].MD5OfBody != MD5OfBody(entries[len(entries)-3].Body) {
			t.Fatalf("round %d: results %+v", round, ok)
		}
		for k, r := range ok {
			// A copy: the results view buf, which the next round reuses.
			ids[strings.Clone(r.MessageID)] = []string{entries[len(entries)-3].Body, entries[len(entries)-1].Body}[k]
		}
		if want := 2 - round; len(failed) != want {
			t.Fatalf("round %d: %d failed, want %d", round, len(failed), want)
		}
	}
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if len(got) != 4 {
		t.Fatalf("received %d messages, want 4", len(got))
	}
	for _, m := range got {
		if ids[m.MessageID] != m.Body {
			t.Errorf("message %s: body %q, sent %q", m.MessageID, m.Body, ids[m.MessageID])
		}
	}
}
