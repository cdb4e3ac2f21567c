// Command redrive shows a worker that fails on one job: SQS hands the job
// out again after each visibility timeout, moves it to the dead-letter
// queue once it has been received maxReceiveCount times, and, once the
// worker is fixed, StartMessageMoveTask redrives it back to be done. Time is
// moved through fanout's clock (POST /_fanout/clock) instead of waited for.
//
// It talks to the endpoint given by --endpoint or FANOUT_ENDPOINT, or, with
// neither, starts fanout in-process on a manual clock.
//
//	go run ./examples/redrive
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "redrive:", err)
		os.Exit(1)
	}
}

// maxReceiveCount is how often a job is tried before it is dead-lettered.
const maxReceiveCount = 2

// visibility is the jobs queue's visibility timeout, in seconds.
const visibility = 30

// strict fails the poison job; the fixed worker accepts it.
func strict(body string) error {
	if body == "poison" {
		return errors.New("cannot parse job")
	}
	return nil
}

func fixed(string) error { return nil }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("redrive", flag.ContinueOnError)
	endpoint := fs.String("endpoint", os.Getenv("FANOUT_ENDPOINT"), "fanout endpoint (FANOUT_ENDPOINT); empty starts fanout in-process on a manual clock")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" {
		srv, err := fanout.Start(ctx, fanout.Options{Clock: clock.NewManual(time.Now()), NoRecreateWait: true})
		if err != nil {
			return err
		}
		defer srv.Close()
		*endpoint = srv.URL()
		fmt.Fprintln(out, "started fanout in-process on a manual clock")
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	sqsc := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint })
	advance := func(d string) error { return postClock(*endpoint, d) }

	jobs, dlqArn, err := setUp(ctx, sqsc, "jobs")
	if err != nil {
		return err
	}
	defer sqsc.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: aws.String(jobs)})
	for _, b := range []string{"job 1", "poison", "job 2"} {
		if _, err := sqsc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(jobs), MessageBody: aws.String(b)}); err != nil {
			return err
		}
	}
	for round := 1; round <= maxReceiveCount+1; round++ {
		done, failed, err := work(ctx, sqsc, jobs, strict)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "round %d: done %v, failed %v\n", round, done, failed)
		if err := advance(fmt.Sprint(visibility, "s")); err != nil { // the failed job's visibility timeout ends
			return err
		}
	}
	if _, err := sqsc.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn)}); err != nil {
		return fmt.Errorf("start redrive: %w", err)
	}
	if err := advance("1s"); err != nil { // move tasks pace themselves on the clock
		return err
	}
	fmt.Fprintln(out, "worker fixed; redrove the dead-letter queue back to jobs")
	done, failed, err := work(ctx, sqsc, jobs, fixed)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "after the redrive: done %v, failed %v\n", done, failed)
	return nil
}

// setUp creates the queue and its dead-letter queue.
func setUp(ctx context.Context, sqsc *sqs.Client, name string) (url, dlqArn string, err error) {
	dlq, err := sqsc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq")})
	if err != nil {
		return "", "", err
	}
	attrs, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", err
	}
	dlqArn = attrs.Attributes["QueueArn"]
	q, err := sqsc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"VisibilityTimeout": fmt.Sprint(visibility),
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlqArn, maxReceiveCount),
	}})
	if err != nil {
		return "", "", err
	}
	return *q.QueueUrl, dlqArn, nil
}

// work is one pass of the worker: it receives what is visible, deletes the
// jobs handle accepts and leaves the others to come back.
func work(ctx context.Context, sqsc *sqs.Client, url string, handle func(string) error) (done, failed []string, err error) {
	for {
		out, err := sqsc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			return nil, nil, err
		}
		if len(out.Messages) == 0 {
			return done, failed, nil
		}
		for _, m := range out.Messages {
			if handle(aws.ToString(m.Body)) != nil {
				failed = append(failed, aws.ToString(m.Body))
				continue
			}
			done = append(done, aws.ToString(m.Body))
			if _, err := sqsc.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return nil, nil, err
			}
		}
	}
}

// postClock moves fanout's clock: POST /_fanout/clock {"advance":"30s"}.
func postClock(endpoint, d string) error {
	resp, err := http.Post(endpoint+"/_fanout/clock", "application/json", strings.NewReader(`{"advance":"`+d+`"}`))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST /_fanout/clock: %s %s", resp.Status, b)
	}
	return nil
}
