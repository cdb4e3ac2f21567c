package fanout

import (
	"context"
	"testing"

	"github.com/fanout/fanout/sns"
)

// BenchmarkPublishToHTTP publishes (through the engine) to a topic with one
// HTTP subscription whose endpoint answers 200, in memory and with a data
// dir: with one, each Publish waits for its delivery's record (group
// commit shared by the parallel publishers), and each delivery's end is
// recorded too; relaxed, the cost of the journal without the fsync wait.
// Each run ends when the deliveries are made, so give it a fixed count:
// go test -run '^$' -bench PublishToHTTP -benchmem -benchtime 3000x .
func BenchmarkPublishToHTTP(b *testing.B) {
	for _, mode := range []string{"memory", "data-dir", "data-dir-relaxed"} {
		b.Run(mode, func(b *testing.B) {
			opts := Options{DeliveryBacklog: 1 << 30}
			if mode != "memory" {
				opts.DataDir = b.TempDir()
			}
			if mode == "data-dir-relaxed" {
				opts.Durability = RelaxedDurability
			}
			s, err := Start(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := newHook(b, 0, false)
			topic, err := s.SNS().CreateTopic("bench", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.SNS().Subscribe(sns.SubscribeInput{TopicArn: topic.Arn(), Protocol: "http", Endpoint: h.srv.URL + "/hook"}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.SNS().ConfirmSubscription(topic.Arn(), <-h.tokens, false, false); err != nil {
				b.Fatal(err)
			}
			msg := "hello"
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.SNS().Publish(sns.PublishInput{TopicArn: topic.Arn(), Message: &msg}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if err := s.deliveries.Settle(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
