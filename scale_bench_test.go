package fanout_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fanout/fanout"
)

// BenchmarkSendQueues sends a JSON 1.0 SendMessage to a random one of many
// queues through fanout's whole handler, without a network: the cost of
// many queues against one queue (the load tool's queues-many). Each queue
// gets one message before the timer starts: a queue's first message makes
// its store (a record page and a chunk), paid once per queue, which the
// cold variant includes. The queues are not purged, as in the load tool,
// so keep -benchtime a count.
// go test -run '^$' -bench SendQueues -benchtime 300000x -benchmem .
func BenchmarkSendQueues(b *testing.B) {
	for _, c := range []struct {
		queues int
		cold   bool
	}{{1, false}, {100_000, false}, {100_000, true}} {
		name := fmt.Sprintf("queues=%d", c.queues)
		if c.cold {
			name += "/cold"
		}
		queues := c.queues
		b.Run(name, func(b *testing.B) {
			s, err := fanout.New(fanout.Options{NoPurgeWait: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// A request's bytes arrive warm from the socket: each body is
			// made when it is sent, not read from 100,000 cold strings.
			body := func(i int) string {
				return `{"QueueUrl":"http://localhost:4566/000000000000/bench-` + strconv.Itoa(i) + `","MessageBody":"` + strings.Repeat("x", 64) + `"}`
			}
			for i := range queues {
				if _, err := s.SQS().CreateQueue("bench-"+strconv.Itoa(i), nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			h := s.Handler()
			if !c.cold {
				for i := range queues {
					serveSend(b, h, body(i))
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			// What each queue holds on Go's heap with its first message
			// (none, cold). A smaller heap is not cheaper to send to: at
			// GOGC 100 the collector runs more often (README, scale).
			heapPerQueue := float64(ms.HeapAlloc) / float64(queues)
			cpu0, gc0 := processCPU(), gcCPU()
			for b.Loop() {
				serveSend(b, h, body(rng.IntN(queues)))
			}
			// CPU time rather than the wall's ns/op, on a machine shared
			// with other work; the collector's share is the runtime's estimate.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric((gcCPU()-gc0)*1e9/float64(b.N), "gc-ns/op")
			b.ReportMetric(heapPerQueue, "heap-B/queue")
		})
	}
}

// gcCPU is the collector's CPU time so far, in seconds (an estimate the
// runtime keeps).
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveSend serves one signed-looking JSON SendMessage through the handler.
func serveSend(b *testing.B, h http.Handler, body string) {
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=00")
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
