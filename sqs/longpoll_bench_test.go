package sqs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
)

// BenchmarkSendToWaitingPolls sends one message at a time to a queue on
// which polls long-poll in a loop, and waits for a poll to return it: the
// cost of a send and its wake-up as the number of waiting polls grows. The
// clock never moves, so no poll times out.
// go test -run '^$' -bench SendToWaitingPolls -benchmem ./sqs/
func BenchmarkSendToWaitingPolls(b *testing.B) {
	for _, polls := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("polls=%d", polls), func(b *testing.B) {
			e := New(Options{Clock: clock.NewManual(time.Unix(0, 0)), NoPurgeWait: true})
			q, err := e.CreateQueue("polled", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan struct{}, polls)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range polls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						out, _ := q.Receive(ctx, ReceiveInput{WaitTimeSeconds: ptr(20)})
						for range out {
							got <- struct{}{}
						}
					}
				}()
			}
			waitForWaiters(b, q, polls)
			in := SendInput{Body: "x"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := q.Send(in); err != nil {
					b.Fatal(err)
				}
				<-got
			}
			b.StopTimer()
			cancel()
			wg.Wait()
			e.Close()
		})
	}
}

// waitForWaiters waits until n long polls wait on q (their deadline timers
// are on the manual clock).
func waitForWaiters(b *testing.B, q *Queue, n int) {
	c := q.engine.clock.(*clock.Manual)
	for c.Pending() < n {
		time.Sleep(time.Millisecond)
	}
}
