package durable_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/sqs"
)

// BenchmarkEmitSQS: a snapshot of one queue's backlog through EmitSQS, into
// an emit that copies every key and value as the op log's does (its chunk
// written to nothing), per message.
func BenchmarkEmitSQS(b *testing.B) {
	for _, c := range []struct {
		n, size int
	}{{100_000, 1024}, {1_000_000, 64}} {
		b.Run(fmt.Sprintf("%dx%dB", c.n, c.size), func(b *testing.B) {
			e := sqs.New(sqs.Options{})
			b.Cleanup(e.Close)
			q, err := e.CreateQueue("bench", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			body := strings.Repeat("x", c.size)
			for range c.n {
				if _, err := q.Send(sqs.SendInput{Body: body}); err != nil {
					b.Fatal(err)
				}
			}
			chunk := make([]byte, 0, 256<<10)
			emit := func(k, v []byte) error {
				if len(chunk)+len(k)+len(v) > cap(chunk) {
					chunk = chunk[:0]
				}
				chunk = append(append(chunk, k...), v...)
				return nil
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for b.Loop() {
				if err := durable.EmitSQS(e, ns, emit); err != nil {
					b.Fatal(err)
				}
			}
			cpu = processCPU() - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/msg")
			// The process's CPU, the collector's included: the machine may be shared.
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*c.n), "cpu-ns/msg")
		})
	}
}

// processCPU is the user and system CPU time the process used so far.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
