package api_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
)

// BenchmarkPublishToReceivable measures one Publish over HTTP and the short
// poll that receives (and deletes) what it delivered, per subscriber count
// and delivery format: SNS enqueues before Publish returns, so this is the
// time from publishing to having the message in hand.
func BenchmarkPublishToReceivable(b *testing.B) {
	for _, bc := range []struct {
		name   string
		queues int
		raw    bool
	}{{"1-queue-envelope", 1, false}, {"1-queue-raw", 1, true}, {"3-queues-envelope", 3, false}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := fanout.Start(context.Background(), fanout.Options{NoPurgeWait: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			e := clients(s, nil)
			c := context.Background()
			topic, _ := e.sns.CreateTopic(c, &sns.CreateTopicInput{Name: aws.String("bench")})
			var urls []string
			for i := 0; i < bc.queues; i++ {
				q, _ := e.sqs.CreateQueue(c, &sqs.CreateQueueInput{QueueName: aws.String("bench" + string(rune('a'+i)))})
				urls = append(urls, aws.ToString(q.QueueUrl))
				attrs := map[string]string{}
				if bc.raw {
					attrs["RawMessageDelivery"] = "true"
				}
				if _, err := e.sns.Subscribe(c, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
					Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:bench" + string(rune('a'+i))), Attributes: attrs}); err != nil {
					b.Fatal(err)
				}
			}
			// One publish first, so the loop does not time making the
			// signing key (see internal/signing).
			if _, err := e.sns.Publish(c, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("warm-up")}); err != nil {
				b.Fatal(err)
			}
			for _, u := range urls {
				_, _ = e.sqs.PurgeQueue(c, &sqs.PurgeQueueInput{QueueUrl: aws.String(u)})
			}
			for b.Loop() {
				if _, err := e.sns.Publish(c, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(`{"order":42}`)}); err != nil {
					b.Fatal(err)
				}
				out, err := e.sqs.ReceiveMessage(c, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[0])})
				if err != nil || len(out.Messages) != 1 {
					b.Fatalf("receive: %v %v", out, err)
				}
				for _, u := range urls {
					if u == urls[0] {
						_, _ = e.sqs.DeleteMessage(c, &sqs.DeleteMessageInput{QueueUrl: aws.String(u), ReceiptHandle: out.Messages[0].ReceiptHandle})
					} else {
						_, _ = e.sqs.PurgeQueue(c, &sqs.PurgeQueueInput{QueueUrl: aws.String(u)})
					}
				}
			}
		})
	}
}
