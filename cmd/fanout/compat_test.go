package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout/internal/sdktest"
)

// TestCompatLocalStack: --compat localstack lets a queue be re-created at
// once and purged twice in a row, as LocalStack does; FANOUT_QUEUE_URL_STYLE
// picks LocalStack's path-style queue URLs.
func TestCompatLocalStack(t *testing.T) {
	bin := buildBinary(t)
	_, ep := startBinary(t, bin, []string{"FANOUT_QUEUE_URL_STYLE=path"}, "serve", "--addr", "127.0.0.1:0", "--compat", "localstack")
	ctx := context.Background()
	c := sqs.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTPClient: sdktest.HTTPClient()},
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) })
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("again")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(*q.QueueUrl, "/queue/us-east-1/000000000000/again") {
		t.Errorf("queue URL %s", *q.QueueUrl)
	}
	for range 2 {
		if _, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: q.QueueUrl}); err != nil {
			t.Fatalf("purge: %v", err)
		}
	}
	if _, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("again")}); err != nil {
		t.Fatalf("re-create at once: %v", err)
	}
}
