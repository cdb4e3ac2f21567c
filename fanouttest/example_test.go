package fanouttest_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout/fanouttest"
)

// In a test, fanouttest.Start(t) starts the server and stops it when the
// test ends; examples have no t, so they use Run and Close.
func ExampleRun() {
	srv, err := fanouttest.Run()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	q := srv.SQSClient()
	url, _ := q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("orders")})
	_, _ = q.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String("order 1"), DelaySeconds: 60})

	m := srv.Peek("orders")[0] // consumes nothing
	fmt.Println(m.Body, m.State, m.StateEnds.Sub(srv.Now()))
	srv.Advance(time.Minute) // no sleeping: the clock is manual
	fmt.Println(srv.Peek("orders")[0].State)
	// Output:
	// order 1 delayed 1m0s
	// visible
}

// A Go handler as an HTTP subscriber: the helper confirms the subscription.
func ExampleServer_HTTPEndpoint() {
	srv, _ := fanouttest.Run()
	defer srv.Close()
	got := make(chan string, 1)
	endpoint := srv.HTTPEndpoint(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("x-amz-sns-message-type")
	}))
	ctx := context.Background()
	n := srv.SNSClient()
	topic, _ := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	_, _ = n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(endpoint)})
	srv.Settle() // the confirmation is delivered in the background
	_, _ = n.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("hello")})
	srv.Settle()
	fmt.Println(<-got)
	// Output: Notification
}

// A Go function as a Lambda subscriber.
func ExampleServer_LambdaFunction() {
	srv, _ := fanouttest.Run()
	defer srv.Close()
	got := make(chan string, 1)
	arn := srv.LambdaFunction(nil, "billing", func(ctx context.Context, ev fanouttest.SNSEvent) error {
		got <- ev.Records[0].SNS.Message
		return nil
	})
	ctx := context.Background()
	n := srv.SNSClient()
	topic, _ := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("invoices")})
	_, _ = n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("lambda"), Endpoint: aws.String(arn)})
	_, _ = n.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("invoice 7")})
	srv.Settle()
	fmt.Println(<-got)
	// Output: invoice 7
}

// Why a message went nowhere: the subscription's filter policy, key by key.
func ExampleServer_Deliveries() {
	srv, _ := fanouttest.Run()
	defer srv.Close()
	ctx := context.Background()
	q, n := srv.SQSClient(), srv.SNSClient()
	_, _ = q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("eu")})
	topic, _ := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders")})
	_, _ = n.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint:   aws.String("arn:aws:sqs:us-east-1:000000000000:eu"),
		Attributes: map[string]string{"FilterPolicy": `{"region":["eu-west-1"]}`}})
	out, _ := n.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("order")})
	for _, r := range srv.Deliveries(*out.MessageId) {
		fmt.Println(r.Status, r.FilterPolicy)
	}
	// Output: filtered-out {"region":["eu-west-1"]}
}
