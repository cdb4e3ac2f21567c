package sqs

import (
	"strings"
	"testing"

	"github.com/fanout/fanout/clock"
)

// A message's id and MD5 take 32 bytes of its queue's memory, not the 68
// of their text, and every way out shows the text the send replied with.
func TestStoredIDsAreBytesShownAsText(t *testing.T) {
	t.Parallel()
	j := newMemJournal()
	e := New(Options{Clock: clock.NewManual(epoch), Journal: j})
	t.Cleanup(e.Close)
	q := mustQueue(t, e, "ids", nil)
	body := strings.Repeat("b", 64)
	const n = 20
	sent := map[string]bool{}
	for range n {
		res, err := q.Send(SendInput{Body: body})
		if err != nil {
			t.Fatal(err)
		}
		sent[res.MessageID] = true
	}
	q.lock()
	written := q.msgs.chunks.written
	q.unlock()
	if bodyAt != 32 || written != n*(32+64) {
		t.Fatalf("%d messages of 64 bytes took %d bytes of chunks (ids %d bytes each)", n, written, bodyAt)
	}
	j.mu.Lock()
	if len(j.msgs) != n {
		t.Errorf("%d messages journaled, want %d", len(j.msgs), n)
	}
	for _, m := range j.msgs {
		if !sent[m.MessageID] || m.MD5OfBody != MD5OfBody(body) {
			t.Errorf("journaled %q %q, sent %v", m.MessageID, m.MD5OfBody, sent)
		}
	}
	j.mu.Unlock()
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	for _, m := range got {
		if !sent[m.MessageID] || m.MD5OfBody != MD5OfBody(body) || m.Body != body {
			t.Errorf("received %q %q %q", m.MessageID, m.MD5OfBody, m.Body)
		}
	}
}

// A caller's BodyMD5 that is not the lower-case text a reply shows is not
// trusted: the body's own MD5 is stored.
func TestBodyMD5NotInReplyFormIsComputed(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "md5", nil)
	body := "hello"
	want := MD5OfBody(body)
	for _, given := range []string{strings.ToUpper(want), strings.Repeat("z", 32), want[:31]} {
		res, err := q.Send(SendInput{Body: body, BodyMD5: given})
		if err != nil || res.MD5OfBody != want {
			t.Errorf("BodyMD5 %q: reply MD5 %q, %v", given, res.MD5OfBody, err)
		}
		if _, err := q.SendNoReply(SendInput{Body: body, BodyMD5: given}); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}) {
		if m.MD5OfBody != want {
			t.Errorf("stored MD5 %q, want %q", m.MD5OfBody, want)
		}
	}
}

// A record whose id or MD5 is not in the form fanout writes is refused,
// not stored as something else.
func TestRestoreRefusesIDsNotInCanonicalForm(t *testing.T) {
	t.Parallel()
	good := "0f8fad5b-d9cb-469f-a165-70867728950e"
	md5 := MD5OfBody("x")
	for _, m := range []MessageRecord{
		{MessageID: strings.ToUpper(good), MD5OfBody: md5},
		{MessageID: strings.Replace(good, "-", "x", 1), MD5OfBody: md5},
		{MessageID: good, MD5OfBody: strings.ToUpper(md5)},
		{MessageID: good[:35], MD5OfBody: md5},
	} {
		r := NewRestorer()
		r.Queue(QueueState{Name: "q"})
		m.Queue, m.Seq, m.Body = "q", 1, "x"
		if err := r.Message(m); err == nil || !strings.Contains(err.Error(), "malformed id or MD5") {
			t.Errorf("%q %q: %v", m.MessageID, m.MD5OfBody, err)
		}
		r.Discard()
	}
	r := NewRestorer()
	r.Queue(QueueState{Name: "q"})
	if err := r.Message(MessageRecord{Queue: "q", Seq: 1, Body: "x", MessageID: good, MD5OfBody: md5}); err != nil {
		t.Fatal(err)
	}
	r.Discard()
}
