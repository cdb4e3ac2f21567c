package fanout_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

// TestRedriveCyclesOverTheWire: a queue that is its own DLQ and two queues
// set as each other's DLQ at the same time, while other SDK clients send,
// receive, list dead-letter sources and the admin endpoint lists queues.
// Each of those once deadlocked the queues involved, and then every listing
// and the shutdown. A hang fails the test after a minute; it times nothing.
func TestRedriveCyclesOverTheWire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := fanout.Start(ctx, fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := sqs.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), HTTPClient: sdktest.HTTPClient()},
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	create := func(name string) (url, arn string) {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
			// Received messages are visible again at once, so receives keep
			// moving them round the cycles.
			Attributes: map[string]string{"VisibilityTimeout": "0"}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		return *out.QueueUrl, a.Attributes["QueueArn"]
	}
	redrive := func(url, target string, max int) error {
		_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{
			"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%d"}`, target, max)}})
		return err
	}
	selfURL, selfArn := create("self")
	aURL, aArn := create("ping")
	bURL, bArn := create("pong")

	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := redrive(selfURL, selfArn, 1); err != nil {
			t.Errorf("self-redrive: %v", err)
		}
		var wg sync.WaitGroup
		loop := func(f func(i int)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 40; i++ {
					f(i)
				}
			}()
		}
		loop(func(i int) {
			if err := redrive(aURL, bArn, 1+i%2); err != nil {
				t.Error(err)
			}
		})
		loop(func(i int) {
			if err := redrive(bURL, aArn, 1+i%2); err != nil {
				t.Error(err)
			}
		})
		for _, u := range []string{selfURL, aURL, bURL} {
			loop(func(int) {
				if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(u), MessageBody: aws.String("m")}); err != nil {
					t.Error(err)
				}
			})
			loop(func(int) {
				if _, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u), MaxNumberOfMessages: 10}); err != nil {
					t.Error(err)
				}
			})
			loop(func(int) {
				if _, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(u)}); err != nil {
					t.Error(err)
				}
			})
		}
		loop(func(int) {
			resp, err := http.Get(s.URL() + "/_fanout/sqs/queues")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET /_fanout/sqs/queues: %d", resp.StatusCode)
			}
		})
		wg.Wait()
		// The 40 messages sent to the queue that is its own DLQ are all
		// still there, however often they moved.
		a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &selfURL, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		if err != nil {
			t.Error(err)
		} else {
			var visible, hidden int
			fmt.Sscan(a.Attributes["ApproximateNumberOfMessages"], &visible)
			fmt.Sscan(a.Attributes["ApproximateNumberOfMessagesNotVisible"], &hidden)
			if visible+hidden != 40 {
				t.Errorf("self holds %d+%d messages, 40 were sent", visible, hidden)
			}
		}
		src, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &aURL})
		if err != nil || len(src.QueueUrls) != 1 || src.QueueUrls[0] != bURL {
			t.Errorf("sources of ping: %v %v", src, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatal("still running after a minute: deadlock (goroutines above)")
	}
}
