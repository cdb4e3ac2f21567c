package fanout_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/sns"
)

// BenchmarkPublish measures a Query-protocol SNS Publish through fanout's
// whole handler, without a network, to 1, 3 and 10 raw SQS subscriptions,
// with bodies of 64 bytes and 1 KiB: form decoding, the browser rule, the
// engine and every delivery. The queues are purged now and then so their
// backlog does not grow with b.N.
// go test -run '^$' -bench Publish -benchmem .
func BenchmarkPublish(b *testing.B) {
	for _, c := range [][2]int{{1, 64}, {3, 64}, {10, 64}, {1, 1024}, {3, 1024}, {10, 1024}} {
		subs, size := c[0], c[1]
		b.Run(fmt.Sprintf("subs=%d/%dB", subs, size), func(b *testing.B) {
			s, err := fanout.New(fanout.Options{NoPurgeWait: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			topic, err := s.SNS().CreateTopic("bench", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			var queues []string
			for i := range subs {
				name := fmt.Sprintf("bench-%d", i)
				q, err := s.SQS().CreateQueue(name, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				queues = append(queues, name)
				in := sns.SubscribeInput{TopicArn: topic.Arn(), Protocol: "sqs", Endpoint: q.Arn(), Attributes: map[string]string{"RawMessageDelivery": "true"}}
				if _, err := s.SNS().Subscribe(in); err != nil {
					b.Fatal(err)
				}
			}
			body := "Action=Publish&Version=2010-03-31&TopicArn=" + url.QueryEscape(topic.Arn()) + "&Message=" + strings.Repeat("x", size)
			h := s.Handler()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				servePublish(b, h, body)
				if i%2000 == 1999 {
					purgeAll(b, s, queues)
				}
			}
		})
	}
}

// BenchmarkPublishTopics publishes to a random one of many topics, each with
// one raw SQS subscription to a queue of its own: the cost of cold topics,
// subscriptions and queues against one topic (the load tool's topics-many).
// go test -run '^$' -bench PublishTopics -benchmem .
func BenchmarkPublishTopics(b *testing.B) {
	for _, topics := range []int{1, 10000} {
		b.Run(fmt.Sprintf("topics=%d", topics), func(b *testing.B) {
			s, err := fanout.New(fanout.Options{NoPurgeWait: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			bodies := make([]string, topics)
			queues := make([]string, topics)
			for i := range topics {
				topic, err := s.SNS().CreateTopic(fmt.Sprintf("bench-%d", i), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				queues[i] = fmt.Sprintf("bench-%d", i)
				q, err := s.SQS().CreateQueue(queues[i], nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				in := sns.SubscribeInput{TopicArn: topic.Arn(), Protocol: "sqs", Endpoint: q.Arn(), Attributes: map[string]string{"RawMessageDelivery": "true"}}
				if _, err := s.SNS().Subscribe(in); err != nil {
					b.Fatal(err)
				}
				bodies[i] = "Action=Publish&Version=2010-03-31&TopicArn=" + url.QueryEscape(topic.Arn()) + "&Message=" + strings.Repeat("x", 64)
			}
			h := s.Handler()
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			cpu := -processCPU()
			for i := 0; b.Loop(); i++ {
				servePublish(b, h, bodies[rng.IntN(topics)])
				if i%20000 == 19999 {
					cpu += processCPU()
					purgeAll(b, s, queues)
					cpu -= processCPU()
				}
			}
			// CPU time, the purges' left out, as in BenchmarkSendQueues.
			b.ReportMetric(float64(cpu+processCPU())/float64(b.N), "cpu-ns/op")
		})
	}
}

// servePublish serves one signed-looking Query Publish through the handler.
func servePublish(b *testing.B, h http.Handler, body string) {
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sns/aws4_request, SignedHeaders=host;x-amz-date, Signature=00")
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// purgeAll empties the benchmark's queues off the clock, so they do not
// grow without bound.
func purgeAll(b *testing.B, s *fanout.Server, queues []string) {
	b.StopTimer()
	for _, q := range queues {
		qq, _ := s.SQS().Queue(q)
		_ = qq.Purge()
	}
	b.StartTimer()
}
