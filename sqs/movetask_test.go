package sqs

import (
	"testing"
	"time"
)

func TestMoveTaskBackToSourceAtRate(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "mt-dlq", nil)
	src := mustQueue(t, e, "mt-src", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":1}`})
	ids := map[string]bool{}
	for i := 0; i < 5; i++ {
		ids[send(t, src, "m").MessageID] = true
	}
	// Receive each once, let visibility lapse, and the next receive dead-letters them.
	receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10), VisibilityTimeout: ptr(0)})
	if got := receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10)}); len(got) != 0 {
		t.Fatalf("source still delivered %d", len(got))
	}
	if attr(t, dlq, AttrApproximateNumberOfMessages) != "5" {
		t.Fatalf("DLQ holds %s", attr(t, dlq, AttrApproximateNumberOfMessages))
	}
	if _, err := e.StartMoveTask(src.Arn(), "", nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf("source that is not a DLQ: %v", err)
	}
	if _, err := e.StartMoveTask("arn:aws:sqs:us-east-1:000000000000:nope", "", nil); code(err) != "ResourceNotFoundException" {
		t.Fatalf("missing source: %v", err)
	}
	if _, err := e.StartMoveTask("not-an-arn", "", nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf("bad arn: %v", err)
	}
	handle, err := e.StartMoveTask(dlq.Arn(), "", ptr(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.StartMoveTask(dlq.Arn(), "", nil); code(err) != "InvalidParameterValueException" {
		t.Fatalf("second running task: %v", err)
	}
	tasks, _ := e.ListMoveTasks(dlq.Arn(), nil)
	if len(tasks) != 1 || tasks[0].Status != TaskRunning || tasks[0].ToMove != 5 || tasks[0].TaskHandle != handle {
		t.Fatalf("tasks %+v", tasks)
	}
	c.Advance(time.Second)
	if attr(t, src, AttrApproximateNumberOfMessages) != "2" {
		t.Fatalf("after 1 s at 2/s the source has %s", attr(t, src, AttrApproximateNumberOfMessages))
	}
	c.Advance(2 * time.Second)
	tasks, _ = e.ListMoveTasks(dlq.Arn(), ptr(10))
	if tasks[0].Status != TaskCompleted || tasks[0].Moved != 5 || tasks[0].TaskHandle != "" {
		t.Fatalf("tasks %+v", tasks)
	}
	got := receive(t, src, ReceiveInput{MaxNumberOfMessages: ptr(10), SystemAttributeNames: []string{SysApproximateReceiveCount}})
	if len(got) != 5 {
		t.Fatalf("redriven %d", len(got))
	}
	for _, m := range got {
		if ids[m.MessageID] {
			t.Fatal("a redriven message kept its old id")
		}
		if m.Attributes[0].Value != "1" {
			t.Fatalf("redriven message receive count %s", m.Attributes[0].Value)
		}
	}
	if _, err := e.CancelMoveTask(handle); code(err) != "ResourceNotFoundException" {
		t.Fatalf("cancel a completed task: %v", err)
	}
}

func TestMoveTaskCancelAndDestination(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "c-dlq", nil)
	mustQueue(t, e, "c-src", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":1}`})
	other := mustQueue(t, e, "c-other", nil)
	for i := 0; i < 10; i++ {
		send(t, dlq, "x")
	}
	h, err := e.StartMoveTask(dlq.Arn(), other.Arn(), ptr(3))
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	moved, err := e.CancelMoveTask(h)
	if err != nil || moved != 3 {
		t.Fatalf("cancel: %d %v", moved, err)
	}
	c.Advance(time.Minute)
	if attr(t, other, AttrApproximateNumberOfMessages) != "3" || attr(t, dlq, AttrApproximateNumberOfMessages) != "7" {
		t.Fatal("a cancelled task kept moving")
	}
	tasks, _ := e.ListMoveTasks(dlq.Arn(), nil)
	if tasks[0].Status != TaskCancelled {
		t.Fatalf("status %s", tasks[0].Status)
	}
	if _, err := e.CancelMoveTask("!!"); code(err) != "InvalidParameterValueException" {
		t.Fatalf("bad handle: %v", err)
	}
}
