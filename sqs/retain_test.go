package sqs

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// inside reports whether s points into buf's memory.
func inside(s, buf string) bool {
	if len(s) == 0 {
		return false
	}
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(buf)))
	return p >= b && p < b+uintptr(len(buf))
}

// A batch entry's strings may be slices of the request body (gjson hands
// them out so). What the queue keeps must not be: one stored message would
// pin its batch neighbours, and a FIFO deduplication id the whole request
// for five minutes (the soak's RSS grew by 5 MB/s until this).
func TestBatchKeepsNoSliceOfTheRequest(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "f.fifo", map[string]string{AttrFifoQueue: "true"})
	request := strings.Repeat("x", 1000) + "group" + "dedup" + "name" + "String" + "value"
	part := func(from, n int) string { return request[from : from+n] }
	_, failed, err := q.SendBatch([]SendBatchEntry{{ID: "1", SendInput: SendInput{
		Body: part(0, 1000), GroupID: part(1000, 5), DeduplicationID: part(1005, 5),
		Attributes: []MessageAttribute{{Name: part(1010, 4), DataType: part(1014, 6), StringValue: part(1020, 5)}},
	}}})
	if err != nil || len(failed) > 0 {
		t.Fatal(err, failed)
	}
	q.lock()
	defer q.unlock()
	for key := range q.fifo.dedup {
		if inside(key, request) {
			t.Error("the deduplication window keeps a slice of the request")
		}
	}
	for id, g := range q.groups.byID {
		if inside(id, request) || inside(g.id, request) {
			t.Error("the group table keeps a slice of the request")
		}
	}
	// The message itself is in the queue's chunks: copies by construction.
	for _, g := range q.groups.byID {
		for _, i := range g.msgs.items {
			b := q.msgs.chunks.bytes(q.rec(i))
			if inside(unsafe.String(&b[0], len(b)), request) {
				t.Error("the stored message is a slice of the request")
			}
		}
	}
}

// A SendBatchBuffer is reused as soon as its reply is written. Nothing the
// queue keeps may point into it: the deduplication window answers a resent
// message with the first one's id five minutes later, and receivers get the
// ids the senders were told.
func TestBatchKeepsNothingOfItsBuffer(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "f.fifo", map[string]string{AttrFifoQueue: "true"})
	var buf SendBatchBuffer
	entry := func(n int) []SendBatchEntry {
		return []SendBatchEntry{{ID: "e", SendInput: SendInput{
			Body: "body", GroupID: "g", DeduplicationID: "d" + strconv.Itoa(n)}}}
	}
	var sent []string
	for n := range 3 {
		ok, failed, err := q.SendBatchInto(&buf, entry(n))
		if err != nil || len(failed) > 0 {
			t.Fatal(err, failed)
		}
		whole := unsafe.String(&buf.idMD5s[0], len(buf.idMD5s))
		if !inside(ok[0].MessageID, whole) {
			t.Fatal("the result's id is not in the buffer it was given")
		}
		sent = append(sent, strings.Clone(ok[0].MessageID))
		buf.Reset()
	}
	whole := unsafe.String(&buf.idMD5s[0], len(buf.idMD5s))
	q.lock()
	for _, d := range q.fifo.dedup {
		if inside(d.messageID, whole) {
			t.Error("the deduplication window keeps an id in the batch's buffer")
		}
	}
	q.unlock()
	for n := range 3 { // resent: the first send's id, not the buffer's last
		ok, _, err := q.SendBatchInto(&buf, entry(n))
		if err != nil || ok[0].MessageID != sent[n] {
			t.Fatalf("resend %d: id %q, want %q (%v)", n, ok[0].MessageID, sent[n], err)
		}
	}
	ten := 10
	got, err := q.Receive(t.Context(), ReceiveInput{MaxNumberOfMessages: &ten})
	if err != nil || len(got) != len(sent) {
		t.Fatalf("received %d messages, %v; want %d", len(got), err, len(sent))
	}
	for i, m := range got {
		if m.MessageID != sent[i] {
			t.Errorf("received id %s, the sender was told %s", m.MessageID, sent[i])
		}
	}
}
