package sqs

import (
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
