package main

// The test a user would write for a worker that fails: the manual clock
// ends visibility timeouts, Peek shows where the job is without touching it.

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout/fanouttest"
	fanoutsqs "github.com/fanout/fanout/sqs"
)

func TestPoisonJobIsDeadLetteredThenRedriven(t *testing.T) {
	t.Parallel()
	srv := fanouttest.Start(t)
	ctx := context.Background()
	sqsc := srv.SQSClient()
	jobs, dlqArn, err := setUp(ctx, sqsc, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqsc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(jobs), MessageBody: aws.String("poison")}); err != nil {
		t.Fatal(err)
	}
	for try := 1; try <= maxReceiveCount; try++ {
		if _, failed, err := work(ctx, sqsc, jobs, strict); err != nil || len(failed) != 1 {
			t.Fatalf("try %d: failed %v, %v", try, failed, err)
		}
		inflight := srv.Peek("jobs", fanoutsqs.MessageInflight)
		if len(inflight) != 1 || inflight[0].ReceiveCount != try || !inflight[0].StateEnds.Equal(srv.Now().Add(visibility*time.Second)) {
			t.Fatalf("try %d: in flight %+v", try, inflight)
		}
		srv.Advance(visibility * time.Second)
	}
	if done, failed, _ := work(ctx, sqsc, jobs, strict); len(done)+len(failed) != 0 {
		t.Fatalf("the job was handed out a third time: %v %v", done, failed)
	}
	dead := srv.Peek("jobs-dlq")
	if len(dead) != 1 || dead[0].Body != "poison" {
		t.Fatalf("DLQ holds %+v", dead)
	}

	if _, err := sqsc.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn)}); err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Second)
	if len(srv.Peek("jobs-dlq")) != 0 {
		t.Fatal("not redriven")
	}
	if done, _, err := work(ctx, sqsc, jobs, fixed); err != nil || len(done) != 1 {
		t.Fatalf("after the redrive: done %v, %v", done, err)
	}
	if len(srv.Peek("jobs")) != 0 {
		t.Fatal("jobs not empty at the end")
	}
}
