package sqs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTestEngine(t *testing.T) (*Engine, *clock.Manual) {
	t.Helper()
	c := clock.NewManual(epoch)
	e := New(Options{Clock: c})
	t.Cleanup(e.Close)
	return e, c
}

func mustQueue(t *testing.T, e *Engine, name string, attrs map[string]string) *Queue {
	t.Helper()
	q, err := e.CreateQueue(name, attrs, nil)
	if err != nil {
		t.Fatalf("CreateQueue(%s): %v", name, err)
	}
	return q
}

func send(t *testing.T, q *Queue, body string) SendResult {
	t.Helper()
	r, err := q.Send(SendInput{Body: body})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return r
}

func ptr(n int) *int { return &n }

func receive(t *testing.T, q *Queue, in ReceiveInput) []Received {
	t.Helper()
	if in.WaitTimeSeconds == nil {
		in.WaitTimeSeconds = ptr(0)
	}
	out, err := q.Receive(context.Background(), in)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return out
}

func code(err error) string {
	var ae *awserr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

func attr(t *testing.T, q *Queue, name string) string {
	t.Helper()
	as, err := q.Attributes([]string{name})
	if err != nil || len(as) != 1 {
		t.Fatalf("Attributes(%s) = %v, %v", name, as, err)
	}
	return as[0].Value
}

func TestVisibilityTimeoutOnManualClock(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "vis", map[string]string{AttrVisibilityTimeout: "30"})
	send(t, q, "a")
	first := receive(t, q, ReceiveInput{})
	if len(first) != 1 {
		t.Fatalf("got %d messages", len(first))
	}
	if got := receive(t, q, ReceiveInput{}); len(got) != 0 {
		t.Fatal("in-flight message was received again")
	}
	if attr(t, q, AttrApproximateNotVisible) != "1" || attr(t, q, AttrApproximateNumberOfMessages) != "0" {
		t.Fatal("counts wrong while in flight")
	}
	c.Advance(29 * time.Second)
	if got := receive(t, q, ReceiveInput{}); len(got) != 0 {
		t.Fatal("visible before the timeout ended")
	}
	c.Advance(time.Second)
	second := receive(t, q, ReceiveInput{SystemAttributeNames: []string{"All"}})
	if len(second) != 1 {
		t.Fatal("not visible after the timeout")
	}
	if second[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Fatal("receipt handle reused across receives")
	}
	sys := map[string]string{}
	for _, a := range second[0].Attributes {
		sys[a.Name] = a.Value
	}
	if sys[SysApproximateReceiveCount] != "2" {
		t.Fatalf("receive count %q", sys[SysApproximateReceiveCount])
	}
	if sys[SysApproximateFirstReceiveTimestamp] != strconv.FormatInt(epoch.UnixMilli(), 10) {
		t.Fatalf("first receive %q", sys[SysApproximateFirstReceiveTimestamp])
	}
	// The old handle no longer deletes (AWS: succeeds, message not deleted).
	if err := q.Delete(first[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if attr(t, q, AttrApproximateNotVisible) != "1" {
		t.Fatal("stale handle deleted the message")
	}
	if err := q.Delete(second[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	if got := receive(t, q, ReceiveInput{}); len(got) != 0 {
		t.Fatal("deleted message came back")
	}
	// Deleting twice is fine.
	if err := q.Delete(second[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
}

func TestChangeVisibility(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "cv", nil)
	send(t, q, "a")
	m := receive(t, q, ReceiveInput{})[0]
	if err := q.ChangeVisibility(m.ReceiptHandle, 100); err != nil {
		t.Fatal(err)
	}
	c.Advance(99 * time.Second)
	if len(receive(t, q, ReceiveInput{})) != 0 {
		t.Fatal("visible before the new timeout")
	}
	c.Advance(time.Second)
	m2 := receive(t, q, ReceiveInput{})
	if len(m2) != 1 {
		t.Fatal("not visible after the new timeout")
	}
	if err := q.ChangeVisibility(m2[0].ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	if len(receive(t, q, ReceiveInput{})) != 1 {
		t.Fatal("visibility 0 did not make it visible")
	}
	if err := q.ChangeVisibility("garbage", 10); code(err) != "ReceiptHandleIsInvalid" {
		t.Fatalf("bad handle: %v", err)
	}
	if err := q.ChangeVisibility(m2[0].ReceiptHandle, 43201); code(err) != "InvalidParameterValueException" {
		t.Fatalf("out of range: %v", err)
	}
	m3 := receive(t, q, ReceiveInput{})
	_ = m3
}

func TestVisibilityCappedAtTwelveHours(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "cap", nil)
	send(t, q, "a")
	m := receive(t, q, ReceiveInput{})[0]
	c.Advance(6 * time.Hour)
	if err := q.ChangeVisibility(m.ReceiptHandle, 6*3600); err != nil {
		t.Fatalf("exactly 12 h: %v", err)
	}
	if err := q.ChangeVisibility(m.ReceiptHandle, 6*3600+1); code(err) != "InvalidParameterValueException" {
		t.Fatalf("past 12 h: %v", err)
	}
}

func TestDelays(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "delay", map[string]string{AttrDelaySeconds: "10"})
	send(t, q, "queue-delay")
	if _, err := q.Send(SendInput{Body: "own-delay", DelaySeconds: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(SendInput{Body: "x", DelaySeconds: ptr(901)}); code(err) != "InvalidParameterValueException" {
		t.Fatalf("delay 901: %v", err)
	}
	if attr(t, q, AttrApproximateDelayed) != "1" {
		t.Fatal("delayed count")
	}
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if len(got) != 1 || got[0].Body != "own-delay" {
		t.Fatalf("got %v", got)
	}
	// Standard queues: changing DelaySeconds does not touch waiting messages.
	if err := q.SetAttributes(map[string]string{AttrDelaySeconds: "0"}); err != nil {
		t.Fatal(err)
	}
	if len(receive(t, q, ReceiveInput{})) != 0 {
		t.Fatal("queue delay change was retroactive")
	}
	c.Advance(10 * time.Second)
	got = receive(t, q, ReceiveInput{})
	if len(got) != 1 || got[0].Body != "queue-delay" {
		t.Fatalf("after delay got %v", got)
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "ret", map[string]string{AttrMessageRetentionPeriod: "60"})
	send(t, q, "old")
	c.Advance(30 * time.Second)
	send(t, q, "new")
	m := receive(t, q, ReceiveInput{VisibilityTimeout: ptr(5)})
	if len(m) != 1 || m[0].Body != "old" {
		t.Fatalf("oldest first: %v", m)
	}
	c.Advance(30 * time.Second) // "old" is 60 s old: gone, even though it was in flight
	if attr(t, q, AttrApproximateNumberOfMessages) != "1" || attr(t, q, AttrApproximateNotVisible) != "0" {
		t.Fatalf("counts after expiry: %s visible, %s in flight", attr(t, q, AttrApproximateNumberOfMessages), attr(t, q, AttrApproximateNotVisible))
	}
	c.Advance(30 * time.Second)
	if len(receive(t, q, ReceiveInput{})) != 0 {
		t.Fatal("expired message delivered")
	}
}

func TestLongPollWakesOnArrival(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "lp", nil)
	got := make(chan []Received)
	go func() {
		out, _ := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		got <- out
	}()
	// The manual clock never moves: only the send can end the wait.
	waitForWaiter(t, q)
	send(t, q, "wake")
	select {
	case out := <-got:
		if len(out) != 1 || out[0].Body != "wake" {
			t.Fatalf("got %v", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long poll did not wake on arrival")
	}
}

// waitForWaiter waits until a long poll has registered its clock timer.
func waitForWaiter(t *testing.T, q *Queue) {
	t.Helper()
	c := q.engine.clock.(*clock.Manual)
	deadline := time.Now().Add(5 * time.Second)
	for c.Pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no long poll waiting")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLongPollTimesOutOnTheClock(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "lpt", map[string]string{AttrReceiveMessageWaitTimeSeconds: "20"})
	done := make(chan []Received)
	go func() {
		out, _ := q.Receive(context.Background(), ReceiveInput{}) // queue default wait
		done <- out
	}()
	waitForWaiter(t, q)
	c.Advance(19 * time.Second)
	select {
	case <-done:
		t.Fatal("returned before 20 s")
	case <-time.After(20 * time.Millisecond):
	}
	c.Advance(time.Second)
	select {
	case out := <-done:
		if len(out) != 0 {
			t.Fatalf("got %v", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not return after 20 s on the clock")
	}
}

func TestLongPollWakesWhenDelayEnds(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "lpd", nil)
	if _, err := q.Send(SendInput{Body: "later", DelaySeconds: ptr(5)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Received)
	go func() {
		out, _ := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		done <- out
	}()
	waitForWaiter(t, q)
	c.Advance(5 * time.Second)
	select {
	case out := <-done:
		if len(out) != 1 {
			t.Fatalf("got %v", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long poll missed the delayed message")
	}
}

func TestLongPollEndsOnCloseAndDelete(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "lpc", nil)
	done := make(chan struct{})
	go func() {
		_, _ = q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		close(done)
	}()
	waitForWaiter(t, q)
	if err := e.DeleteQueue("lpc"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("long poll outlived its queue")
	}
	q2 := mustQueue(t, e, "lpc2", nil)
	done2 := make(chan struct{})
	go func() {
		_, _ = q2.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		close(done2)
	}()
	waitForWaiter(t, q2)
	e.Close()
	select {
	case <-done2:
	case <-time.After(5 * time.Second):
		t.Fatal("long poll outlived the engine")
	}
}

func TestQueueDeletedRecentlyAndPurgeWindow(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	q := mustQueue(t, e, "gone", nil)
	send(t, q, "x")
	if err := q.Purge(); err != nil {
		t.Fatal(err)
	}
	if attr(t, q, AttrApproximateNumberOfMessages) != "0" {
		t.Fatal("purge left messages")
	}
	if err := q.Purge(); code(err) != "PurgeQueueInProgress" {
		t.Fatalf("second purge: %v", err)
	}
	c.Advance(60 * time.Second)
	if err := q.Purge(); err != nil {
		t.Fatalf("purge after 60 s: %v", err)
	}
	if err := e.DeleteQueue("gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateQueue("gone", nil, nil); code(err) != "QueueDeletedRecently" {
		t.Fatalf("recreate: %v", err)
	}
	c.Advance(60 * time.Second)
	if _, err := e.CreateQueue("gone", nil, nil); err != nil {
		t.Fatalf("recreate after 60 s: %v", err)
	}
	relaxed := New(Options{Clock: c, NoRecreateWait: true, NoPurgeWait: true})
	rq := mustQueue(t, relaxed, "r", nil)
	for range 2 {
		if rq.Purge() != nil {
			t.Fatal("NoPurgeWait did not relax the purge window")
		}
	}
	_ = relaxed.DeleteQueue("r")
	if _, err := relaxed.CreateQueue("r", nil, nil); err != nil {
		t.Fatalf("NoRecreateWait: %v", err)
	}
}

func TestDeadLetterAfterMaxReceives(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "dlq", map[string]string{AttrMessageRetentionPeriod: "120"})
	src := mustQueue(t, e, "src", map[string]string{
		AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":"2"}`,
	})
	if v := attr(t, src, AttrRedrivePolicy); v != `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":2}` {
		t.Fatalf("RedrivePolicy rendered as %s", v)
	}
	sent := send(t, src, "poison")
	c.Advance(100 * time.Second)
	for i := 0; i < 2; i++ {
		if len(receive(t, src, ReceiveInput{VisibilityTimeout: ptr(0)})) != 1 {
			t.Fatalf("receive %d", i+1)
		}
	}
	if got := receive(t, src, ReceiveInput{}); len(got) != 0 {
		t.Fatal("delivered a third time")
	}
	got := receive(t, dlq, ReceiveInput{SystemAttributeNames: []string{"All"}, VisibilityTimeout: ptr(0)})
	if len(got) != 1 || got[0].MessageID != sent.MessageID || got[0].Body != "poison" {
		t.Fatalf("DLQ got %v", got)
	}
	var source string
	for _, a := range got[0].Attributes {
		if a.Name == SysDeadLetterQueueSourceArn {
			source = a.Value
		}
	}
	if source != src.Arn() {
		t.Fatalf("DeadLetterQueueSourceArn %q", source)
	}
	names, _ := e.DeadLetterSourceQueues("dlq")
	if len(names) != 1 || names[0] != "src" {
		t.Fatalf("sources %v", names)
	}
	// A standard DLQ keeps the original enqueue time: 100 s old + 20 s = 120 s retention.
	c.Advance(20 * time.Second)
	if attr(t, dlq, AttrApproximateNumberOfMessages) != "0" || attr(t, dlq, AttrApproximateNotVisible) != "0" {
		t.Fatal("retention in the DLQ restarted")
	}
}

func TestRedrivePolicyValidation(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	dlq := mustQueue(t, e, "d", nil)
	cases := []struct{ policy, code, msg string }{
		{`{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":0}`, "InvalidParameterValueException",
			`Value {"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d","maxReceiveCount":0} for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: 0, valid values are from 1 to 1000 both inclusive.`},
		{`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:nope","maxReceiveCount":3}`, "InvalidParameterValueException", ""},
		{`not json`, "InvalidParameterValueException", ""},
	}
	for _, tc := range cases {
		_, err := e.CreateQueue("s", map[string]string{AttrRedrivePolicy: tc.policy}, nil)
		if code(err) != tc.code {
			t.Errorf("%s: %v", tc.policy, err)
		}
		var ae *awserr.Error
		if tc.msg != "" && errors.As(err, &ae) && ae.Message != tc.msg {
			t.Errorf("message %q\nwant    %q", ae.Message, tc.msg)
		}
	}
	if err := dlq.SetAttributes(map[string]string{AttrRedriveAllowPolicy: `{"redrivePermission":"denyAll"}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateQueue("s", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":3}`}, nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf("denyAll allowed a source: %v", err)
	}
}

func TestCreateQueueIdempotenceAndNames(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	mustQueue(t, e, "idem", map[string]string{AttrVisibilityTimeout: "60"})
	if _, err := e.CreateQueue("idem", map[string]string{AttrVisibilityTimeout: "60"}, nil); err != nil {
		t.Fatalf("same attributes: %v", err)
	}
	if _, err := e.CreateQueue("idem", nil, nil); err != nil {
		t.Fatalf("no attributes: %v", err)
	}
	if _, err := e.CreateQueue("idem", map[string]string{AttrDelaySeconds: "0"}, nil); err != nil {
		t.Fatalf("default value given: %v", err)
	}
	_, err := e.CreateQueue("idem", map[string]string{AttrVisibilityTimeout: "61"}, nil)
	if code(err) != "QueueNameExists" || err.(*awserr.Error).Message != "A queue already exists with the same name and a different value for attribute VisibilityTimeout" {
		t.Fatalf("different attributes: %v", err)
	}
	for _, bad := range []string{"has space", "x" + string(make([]byte, 80)), "a.b", "ünï"} {
		if _, err := e.CreateQueue(bad, nil, nil); code(err) != "InvalidParameterValueException" {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	if _, err := e.CreateQueue("abc", map[string]string{"Bogus": "1"}, nil); code(err) != "InvalidAttributeName" {
		t.Fatalf("unknown attribute: %v", err)
	}
	if _, err := e.CreateQueue("abc", map[string]string{AttrContentBasedDeduplication: "true"}, nil); code(err) != "InvalidAttributeName" {
		t.Fatalf("FIFO attribute on standard: %v", err)
	}
	for name, v := range map[string]string{AttrDelaySeconds: "901", AttrMaximumMessageSize: "1023", AttrMessageRetentionPeriod: "59", AttrReceiveMessageWaitTimeSeconds: "21", AttrVisibilityTimeout: "43201"} {
		if _, err := e.CreateQueue("abc", map[string]string{name: v}, nil); code(err) != "InvalidAttributeValue" {
			t.Errorf("%s=%s: %v", name, v, err)
		}
	}
}

func TestMessageValidation(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "val", map[string]string{AttrMaximumMessageSize: "1024"})
	long := make([]byte, 1025)
	for i := range long {
		long[i] = 'a'
	}
	cases := []struct {
		name string
		in   SendInput
		code string
	}{
		{"empty body", SendInput{}, "MissingRequiredParameterException"},
		{"control char", SendInput{Body: "a\x00b"}, "InvalidMessageContents"},
		{"lone surrogate bytes", SendInput{Body: "a\xed\xa0\x80"}, "InvalidMessageContents"},
		{"too long", SendInput{Body: string(long)}, "InvalidParameterValueException"},
		{"attributes count toward size", SendInput{Body: string(long[:1000]), Attributes: []MessageAttribute{{Name: "n", DataType: "String", StringValue: string(long[:20])}}}, "InvalidParameterValueException"},
		{"empty string attr", SendInput{Body: "b", Attributes: []MessageAttribute{{Name: "n", DataType: "String"}}}, "InvalidParameterValueException"},
		{"bad type", SendInput{Body: "b", Attributes: []MessageAttribute{{Name: "n", DataType: "Text", StringValue: "v"}}}, "InvalidParameterValueException"},
		{"bad number", SendInput{Body: "b", Attributes: []MessageAttribute{{Name: "n", DataType: "Number", StringValue: "12a"}}}, "InvalidParameterValueException"},
		{"reserved name", SendInput{Body: "b", Attributes: []MessageAttribute{{Name: "AWS.x", DataType: "String", StringValue: "v"}}}, "InvalidParameterValueException"},
		{"dedup id on standard", SendInput{Body: "b", DeduplicationID: "d"}, "InvalidParameterValueException"},
		{"bad group id", SendInput{Body: "b", GroupID: "has space"}, "InvalidParameterValueException"},
		{"bad system attribute", SendInput{Body: "b", SystemAttributes: []MessageAttribute{{Name: "Other", DataType: "String", StringValue: "v"}}}, "InvalidParameterValueException"},
	}
	for _, tc := range cases {
		if _, err := q.Send(tc.in); code(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.code)
		}
	}
	eleven := make([]MessageAttribute, 11)
	for i := range eleven {
		eleven[i] = MessageAttribute{Name: "a" + strconv.Itoa(i), DataType: "String", StringValue: "v"}
	}
	if _, err := q.Send(SendInput{Body: "b", Attributes: eleven}); code(err) != "InvalidParameterValueException" {
		t.Errorf("11 attributes: %v", err)
	}
	if attr(t, q, AttrApproximateNumberOfMessages) != "0" {
		t.Fatal("an invalid message was stored")
	}
	// Fair queues: a MessageGroupId on a standard queue is kept and returned.
	if _, err := q.Send(SendInput{Body: "tenant", GroupID: "tenant-1"}); err != nil {
		t.Fatal(err)
	}
	got := receive(t, q, ReceiveInput{SystemAttributeNames: []string{SysMessageGroupID}})
	if len(got) != 1 || len(got[0].Attributes) != 1 || got[0].Attributes[0].Value != "tenant-1" {
		t.Fatalf("group id: %v", got)
	}
}

func TestMD5OfAttributesKnownVectors(t *testing.T) {
	t.Parallel()
	// Recorded against AWS (see the spec, §5.1).
	got := MD5OfAttributes([]MessageAttribute{{Name: "attr1", DataType: "Number", StringValue: "99.12"}, {Name: "attr2", DataType: "Number", StringValue: "109.12"}})
	if got != "9b720b3af309c1c4b0d395c53b08c502" {
		t.Fatalf("two numbers: %s", got)
	}
	if got := MD5OfAttributes([]MessageAttribute{{Name: "attr1", DataType: "Number", StringValue: "19.12"}}); got != "1f07082409022a373fa2a2601f82b3cb" {
		t.Fatalf("one number: %s", got)
	}
	if MD5OfBody("hello") != "5d41402abc4b2a76b9719d911017c592" {
		t.Fatal("body md5")
	}
}

func TestAttributeSelection(t *testing.T) {
	t.Parallel()
	attrs := []MessageAttribute{{Name: "bar.a"}, {Name: "bar.b"}, {Name: "foo"}}
	cases := []struct {
		names []string
		want  int
	}{{nil, 0}, {[]string{"All"}, 3}, {[]string{".*"}, 3}, {[]string{"bar.*"}, 2}, {[]string{"foo"}, 1}, {[]string{"nope"}, 0}}
	for _, tc := range cases {
		if got := selectAttributes(attrs, tc.names); len(got) != tc.want {
			t.Errorf("%v selected %d, want %d", tc.names, len(got), tc.want)
		}
	}
}

func TestReceiveValidation(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "rv", nil)
	for _, in := range []ReceiveInput{{MaxNumberOfMessages: ptr(11)}, {MaxNumberOfMessages: ptr(0)}, {WaitTimeSeconds: ptr(21)}, {VisibilityTimeout: ptr(-1)}} {
		if _, err := q.Receive(context.Background(), in); code(err) != "InvalidParameterValueException" {
			t.Errorf("%+v: %v", in, err)
		}
	}
	if _, err := q.Receive(context.Background(), ReceiveInput{SystemAttributeNames: []string{"Nope"}}); code(err) != "InvalidAttributeName" {
		t.Errorf("unknown system attribute: %v", err)
	}
	_, err := q.Receive(context.Background(), ReceiveInput{MaxNumberOfMessages: ptr(11)})
	if err.(*awserr.Error).Message != "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided." {
		t.Fatalf("message %q", err.(*awserr.Error).Message)
	}
}

func TestReceiptHandleOfAnotherQueue(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	a, b := mustQueue(t, e, "ha", nil), mustQueue(t, e, "hb", nil)
	send(t, a, "x")
	h := receive(t, a, ReceiveInput{})[0].ReceiptHandle
	if err := b.Delete(h); code(err) != "ReceiptHandleIsInvalid" {
		t.Fatalf("foreign handle: %v", err)
	}
	if err := a.Delete("not-a-handle"); code(err) != "ReceiptHandleIsInvalid" {
		t.Fatalf("garbage handle: %v", err)
	}
}

func TestBatchRules(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "batch", nil)
	if _, _, err := q.SendBatch(nil); code(err) != "EmptyBatchRequest" {
		t.Fatalf("empty: %v", err)
	}
	many := make([]SendBatchEntry, 11)
	for i := range many {
		many[i] = SendBatchEntry{ID: strconv.Itoa(i), SendInput: SendInput{Body: "x"}}
	}
	if _, _, err := q.SendBatch(many); code(err) != "TooManyEntriesInBatchRequest" {
		t.Fatalf("11: %v", err)
	}
	if _, _, err := q.SendBatch([]SendBatchEntry{{ID: "a", SendInput: SendInput{Body: "x"}}, {ID: "a", SendInput: SendInput{Body: "y"}}}); code(err) != "BatchEntryIdsNotDistinct" {
		t.Fatalf("dup: %v", err)
	}
	if _, _, err := q.SendBatch([]SendBatchEntry{{ID: "a b", SendInput: SendInput{Body: "x"}}}); code(err) != "InvalidBatchEntryId" {
		t.Fatalf("bad id: %v", err)
	}
	big := make([]byte, 600000)
	for i := range big {
		big[i] = 'b'
	}
	if _, _, err := q.SendBatch([]SendBatchEntry{{ID: "a", SendInput: SendInput{Body: string(big)}}, {ID: "b", SendInput: SendInput{Body: string(big)}}}); code(err) != "BatchRequestTooLong" {
		t.Fatalf("too long: %v", err)
	}
	ok, failed, err := q.SendBatch([]SendBatchEntry{{ID: "good", SendInput: SendInput{Body: "x"}}, {ID: "bad", SendInput: SendInput{Body: ""}}})
	if err != nil || len(ok) != 1 || len(failed) != 1 || failed[0].ID != "bad" || failed[0].Code != "MissingParameter" || !failed[0].SenderFault {
		t.Fatalf("partial: %v %v %v", ok, failed, err)
	}
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "perm", nil)
	if err := q.AddPermission("l1", []string{"111122223333"}, []string{"SendMessage"}); err != nil {
		t.Fatal(err)
	}
	want := `{"Version":"2008-10-17","Id":"arn:aws:sqs:us-east-1:000000000000:perm/SQSDefaultPolicy","Statement":[{"Sid":"l1","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"SQS:SendMessage","Resource":"arn:aws:sqs:us-east-1:000000000000:perm"}]}`
	if got := attr(t, q, AttrPolicy); got != want {
		t.Fatalf("policy\n%s\nwant\n%s", got, want)
	}
	if err := q.AddPermission("l1", []string{"1"}, []string{"SendMessage"}); code(err) != "InvalidParameterValueException" {
		t.Fatalf("dup label: %v", err)
	}
	if err := q.AddPermission("l2", []string{"1"}, []string{"Bogus"}); code(err) != "InvalidParameterValueException" {
		t.Fatalf("bad action: %v", err)
	}
	if err := q.RemovePermission("nope"); code(err) != "InvalidParameterValueException" {
		t.Fatalf("unknown label: %v", err)
	}
	if err := q.RemovePermission("l1"); err != nil {
		t.Fatal(err)
	}
	if as, _ := q.Attributes([]string{AttrPolicy}); len(as) != 0 {
		t.Fatalf("policy left after last statement: %v", as)
	}
}

// TestConcurrentSendReceiveDelete checks under -race that every message sent
// by many producers is received and deleted exactly once by many consumers.
func TestConcurrentSendReceiveDelete(t *testing.T) {
	t.Parallel()
	e := New(Options{})
	defer e.Close()
	q, _ := e.CreateQueue("conc", nil, nil)
	const producers, per = 4, 250
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := q.Send(SendInput{Body: strconv.Itoa(p*per + i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}(p)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var cw sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for c := 0; c < 4; c++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for ctx.Err() == nil {
				msgs, err := q.Receive(ctx, ReceiveInput{MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(1), VisibilityTimeout: ptr(60)})
				if err != nil {
					return
				}
				for _, m := range msgs {
					if err := q.Delete(m.ReceiptHandle); err != nil {
						t.Error(err)
					}
					mu.Lock()
					seen[m.Body]++
					n := len(seen)
					mu.Unlock()
					if n == producers*per {
						cancel()
					}
				}
			}
		}()
	}
	wg.Wait()
	cw.Wait()
	if len(seen) != producers*per {
		t.Fatalf("received %d distinct of %d", len(seen), producers*per)
	}
	for b, n := range seen {
		if n != 1 {
			t.Fatalf("%s received %d times", b, n)
		}
	}
}

func TestFairQueuePrefersQuietGroups(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "fair", nil)
	for i := 0; i < 30; i++ {
		if _, err := q.Send(SendInput{Body: "noisy", GroupID: "big"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Send(SendInput{Body: "calm", GroupID: "small"}); err != nil {
		t.Fatal(err)
	}
	// The first receive takes "big" messages in send order: then it holds 10
	// in flight and small none, which makes big noisy.
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if q.NoisyGroups() != 1 {
		t.Fatalf("noisy groups %d, want 1", q.NoisyGroups())
	}
	// With big noisy, the one message of small comes first.
	next := receive(t, q, ReceiveInput{})
	if len(next) != 1 || next[0].Body != "calm" {
		t.Fatalf("got %v", bodies(next))
	}
	// Nothing else is waiting: the noisy group still gets served.
	if rest := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}); len(rest) != 10 {
		t.Fatalf("noisy group starved: %d", len(rest))
	}
	for _, m := range got {
		_ = q.Delete(m.ReceiptHandle)
	}
	if q.NoisyGroups() != 1 { // 10 of big still in flight, small's one too
		t.Fatalf("after deletes: %d", q.NoisyGroups())
	}
}

func TestStandardMessageGoesToBackAfterThreeReceives(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "back-dlq", nil)
	q := mustQueue(t, e, "back", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":5}`})
	send(t, q, "old")
	for i := 0; i < 3; i++ {
		if got := receive(t, q, ReceiveInput{}); len(got) != 1 || got[0].Body != "old" {
			t.Fatalf("receive %d: %v", i, bodies(got))
		}
		if i < 2 {
			c.Advance(30 * time.Second)
		}
	}
	send(t, q, "new")
	c.Advance(30 * time.Second)
	got := receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(2)})
	if fmt.Sprint(bodies(got)) != "[new old]" {
		t.Fatalf("order %v", bodies(got))
	}
}

func TestValidBodyFastPathAgreesWithTheRule(t *testing.T) {
	t.Parallel()
	slow := func(s string) bool {
		for _, r := range s {
			ok := r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
			if !ok {
				return false
			}
		}
		return utf8.ValidString(s)
	}
	for _, s := range []string{"", "plain ascii text, long enough for words", "0123456789abcdef\x00", "0123456789abcdef\x1f", "01234567\t\n\r89abcdef", "héllo wörld 12345678", "abcdefgh\x7f", "abcdefgh\uFFFE", "abcdefgh\xff", "abcdefghijklmnop\U0001F600"} {
		if validBody(s) != slow(s) {
			t.Errorf("validBody(%q) = %v", s, validBody(s))
		}
	}
	// The odd byte or character anywhere in a body of up to 100 bytes:
	// before, across and after the 32- and 8-byte words.
	odd := []string{"\t", "\n", "\x00", "\x1f", "\x7f", "é", "\uFFFD", "\uFFFE", "\U0001F600", "\xff", "\xed\xa0\x80", "\xe2\x82"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := r.IntN(100)
		s := strings.Repeat("x", n)
		if n > 0 && r.IntN(4) > 0 {
			at := r.IntN(n)
			s = s[:at] + odd[r.IntN(len(odd))] + s[at:]
		}
		if validBody(s) != slow(s) {
			t.Fatalf("validBody(%q) = %v", s, validBody(s))
		}
	}
}

func TestInflightLimitOverLimit(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "limit", nil)
	for i := 0; i < inflightLimit+1; i++ {
		q.Send(SendInput{Body: "m"})
	}
	for n := 0; n < inflightLimit; {
		n += len(receive(t, q, ReceiveInput{MaxNumberOfMessages: ptr(10)}))
	}
	if _, err := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(0)}); code(err) != "OverLimit" {
		t.Fatalf("short poll past the limit: %v", err)
	}
	done := make(chan []Received)
	go func() {
		out, err := q.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(1)})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	waitForWaiter(t, q)
	q.engine.clock.(*clock.Manual).Advance(time.Second)
	if out := <-done; len(out) != 0 {
		t.Fatal("a long poll past the limit returned messages")
	}
}

// BodyChecked spares the character scan only: a body SNS already checked
// is stored as given, and every other rule still applies to it.
func TestBodyCheckedSkipsOnlyTheCharacterScan(t *testing.T) {
	t.Parallel()
	e, _ := newTestEngine(t)
	q := mustQueue(t, e, "checked", map[string]string{AttrMaximumMessageSize: "1024"})
	if _, err := q.Send(SendInput{Body: "bell \a"}); code(err) != "InvalidMessageContents" {
		t.Fatalf("unchecked control character: %v", err)
	}
	for _, c := range []struct {
		in   SendInput
		code string
	}{
		{SendInput{BodyChecked: true}, ErrMissingParameter.Code},
		{SendInput{Body: strings.Repeat("x", 1025), BodyChecked: true}, ErrInvalidParameterValue.Code},
		{SendInput{Body: "x", DelaySeconds: ptr(901), BodyChecked: true}, ErrInvalidParameterValue.Code},
		{SendInput{Body: "x", Attributes: []MessageAttribute{{Name: "a", DataType: "String"}}, BodyChecked: true}, ErrInvalidParameterValue.Code},
	} {
		if _, err := q.Send(c.in); code(err) != c.code {
			t.Errorf("%+v: %v, want %s", c.in, err, c.code)
		}
	}
	res, err := q.Send(SendInput{Body: "checked é", BodyChecked: true})
	if err != nil || res.MD5OfBody != MD5OfBody("checked é") {
		t.Fatalf("send: %+v %v", res, err)
	}
	got, err := q.Receive(context.Background(), ReceiveInput{MaxNumberOfMessages: ptr(10)})
	if err != nil || len(got) != 1 || got[0].Body != "checked é" || got[0].MessageID != res.MessageID {
		t.Fatalf("received %+v %v", got, err)
	}
}
