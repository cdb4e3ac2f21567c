package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fanout/fanout"
)

// BenchmarkWire measures the hot JSON actions through fanout's whole
// handler without a network: decoding, the engine and the reply. Sends go
// to a queue that is purged every 10,000 messages, so the backlog does not
// grow with b.N. go test -run '^$' -bench Wire -benchmem ./sqs/api/
func BenchmarkWire(b *testing.B) {
	for _, size := range []int{64, 1024} {
		body := strings.Repeat("x", size)
		b.Run(fmt.Sprintf("SendMessage/%dB", size), func(b *testing.B) {
			w := newWireBench(b)
			req := `{"QueueUrl":"` + w.url + `","MessageBody":"` + body + `"}`
			for i := 0; b.Loop(); i++ {
				w.call("SendMessage", req)
				w.purgeEvery(i, 10_000)
			}
		})
		b.Run(fmt.Sprintf("SendMessageBatch/%dB", size), func(b *testing.B) {
			w := newWireBench(b)
			var es []string
			for i := range 10 {
				es = append(es, fmt.Sprintf(`{"Id":"m%d","MessageBody":"%s"}`, i, body))
			}
			req := `{"QueueUrl":"` + w.url + `","Entries":[` + strings.Join(es, ",") + `]}`
			for i := 0; b.Loop(); i++ {
				w.call("SendMessageBatch", req)
				w.purgeEvery(i, 1_000)
			}
		})
		b.Run(fmt.Sprintf("ReceiveDeleteBatch/%dB", size), func(b *testing.B) {
			w := newWireBench(b)
			recv := `{"QueueUrl":"` + w.url + `","MaxNumberOfMessages":10}`
			var es []string
			for i := range 10 {
				es = append(es, fmt.Sprintf(`{"Id":"m%d","MessageBody":"%s"}`, i, body))
			}
			send := `{"QueueUrl":"` + w.url + `","Entries":[` + strings.Join(es, ",") + `]}`
			for b.Loop() {
				b.StopTimer()
				w.call("SendMessageBatch", send)
				b.StartTimer()
				var got struct {
					Messages []struct{ ReceiptHandle string }
				}
				if err := json.Unmarshal(w.call("ReceiveMessage", recv), &got); err != nil || len(got.Messages) == 0 {
					b.Fatalf("receive: %v %d", err, len(got.Messages))
				}
				var del strings.Builder
				del.WriteString(`{"QueueUrl":"` + w.url + `","Entries":[`)
				for i, m := range got.Messages {
					if i > 0 {
						del.WriteByte(',')
					}
					fmt.Fprintf(&del, `{"Id":"d%d","ReceiptHandle":"%s"}`, i, m.ReceiptHandle)
				}
				del.WriteString(`]}`)
				w.call("DeleteMessageBatch", del.String())
			}
		})
	}
}

type wireBench struct {
	b   *testing.B
	h   hostile
	url string
}

func newWireBench(b *testing.B) wireBench {
	b.Helper()
	s, err := fanout.New(fanout.Options{AllowUnsigned: true, NoPurgeWait: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	w := wireBench{b: b, h: hostile{h: s.Handler()}}
	var out struct{ QueueUrl string }
	if err := json.Unmarshal(w.call("CreateQueue", `{"QueueName":"bench"}`), &out); err != nil {
		b.Fatal(err)
	}
	w.url = out.QueueUrl
	b.ReportAllocs()
	return w
}

func (w wireBench) call(action, body string) []byte {
	rec := w.h.call(action, strings.NewReader(body))
	if rec.Code != 200 {
		w.b.Fatalf("%s: %d %s", action, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

func (w wireBench) purgeEvery(i, n int) {
	if i%n == n-1 {
		w.b.StopTimer()
		w.call("PurgeQueue", `{"QueueUrl":"`+w.url+`"}`)
		w.b.StartTimer()
	}
}
