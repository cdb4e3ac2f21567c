package sqs

import (
	"context"
	"testing"
	"time"
)

func TestResetEndsEverything(t *testing.T) {
	t.Parallel()
	e, c := newTestEngine(t)
	dlq := mustQueue(t, e, "dlq", nil)
	src := mustQueue(t, e, "src", map[string]string{AttrRedrivePolicy: `{"deadLetterTargetArn":"` + dlq.Arn() + `","maxReceiveCount":1}`})
	for range 5 {
		send(t, dlq, "m")
	}
	if _, err := e.StartMoveTask(dlq.Arn(), src.Arn(), ptr(1)); err != nil {
		t.Fatal(err)
	}
	polled := make(chan []Received)
	go func() {
		out, _ := src.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		polled <- out
	}()
	for c.Pending() < 2 { // the move task's tick and the long poll
		time.Sleep(time.Millisecond)
	}
	if err := e.DeleteQueue("src"); err != nil {
		t.Fatal(err)
	}
	<-polled
	src = mustQueue(t, e, "src2", nil)
	go func() {
		out, _ := src.Receive(context.Background(), ReceiveInput{WaitTimeSeconds: ptr(20)})
		polled <- out
	}()
	for c.Pending() < 2 {
		time.Sleep(time.Millisecond)
	}

	e.Reset()
	select {
	case out := <-polled:
		if len(out) != 0 {
			t.Fatalf("long poll got %v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll outlived the reset")
	}
	if qs := e.ListQueues(""); len(qs) != 0 {
		t.Fatalf("queues after reset: %v", qs)
	}
	if _, err := dlq.Peek(PeekOptions{}); code(err) != ErrQueueDoesNotExist.Code {
		t.Fatalf("old queue after reset: %v", err)
	}
	if tasks, err := e.ListMoveTasks(dlq.Arn(), nil); err == nil && len(tasks) != 0 {
		t.Fatalf("move tasks after reset: %+v", tasks)
	}
	for c.Pending() != 0 {
		time.Sleep(time.Millisecond) // the long poll's timer goes as it returns
	}
	// "src" was deleted a moment ago; after a reset the name is free at once.
	q := mustQueue(t, e, "src", nil)
	if r := peek(t, q, PeekOptions{}); len(r.Messages) != 0 {
		t.Fatalf("new queue holds %v", r.Messages)
	}
}
