package sqs

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
)

// Engine benchmarks, without HTTP: per-message cost of send, receive and
// delete. Run with: go test -run '^$' -bench . -benchmem ./sqs/

var benchBody = strings.Repeat("x", 1024)

func benchQueue(b *testing.B) *Queue {
	e := New(Options{NoPurgeWait: true})
	b.Cleanup(e.Close)
	q, err := e.CreateQueue("bench", map[string]string{AttrMessageRetentionPeriod: "1209600"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return q
}

func BenchmarkSend(b *testing.B) {
	q := benchQueue(b)
	in := SendInput{Body: benchBody}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Send(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSendParallel(b *testing.B) {
	q := benchQueue(b)
	in := SendInput{Body: benchBody}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := q.Send(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// refill tops q up with n messages outside the timer.
func refill(b *testing.B, q *Queue, n int) {
	b.StopTimer()
	_ = q.Purge()
	for i := 0; i < n; i++ {
		if _, err := q.Send(SendInput{Body: benchBody}); err != nil {
			b.Fatal(err)
		}
	}
	b.StartTimer()
}

// BenchmarkReceive measures one received message (receives of 10).
func BenchmarkReceive(b *testing.B) {
	q := benchQueue(b)
	ten := 10
	in := ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: new(int), VisibilityTimeout: &ten}
	ctx := context.Background()
	b.ReportAllocs()
	for n := 0; n < b.N; {
		out, err := q.Receive(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if len(out) == 0 {
			refill(b, q, 10000)
			continue
		}
		n += len(out)
	}
}

// BenchmarkDelete measures one delete of a received message.
func BenchmarkDelete(b *testing.B) {
	q := benchQueue(b)
	ten := 10
	in := ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: new(int)}
	var handles []string
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(handles) == 0 {
			b.StopTimer()
			refill(b, q, 1000)
			b.StopTimer()
			for len(handles) < 1000 {
				out, _ := q.Receive(context.Background(), in)
				for _, m := range out {
					handles = append(handles, m.ReceiptHandle)
				}
			}
			b.StartTimer()
		}
		if err := q.Delete(handles[len(handles)-1]); err != nil {
			b.Fatal(err)
		}
		handles = handles[:len(handles)-1]
	}
}

// benchDrain receives and deletes in batches of 10 from a queue kept at
// depth messages (each deleted message is replaced by a new one), and reports
// the cost per message of receive + delete + the replacing send.
func benchDrain(b *testing.B, depth int) {
	e := New(Options{})
	b.Cleanup(e.Close)
	q, _ := e.CreateQueue("drain", map[string]string{AttrMessageRetentionPeriod: "1209600"}, nil)
	for i := 0; i < depth; i++ {
		q.Send(SendInput{Body: "m"})
	}
	ten := 10
	in := ReceiveInput{MaxNumberOfMessages: &ten, WaitTimeSeconds: new(int)}
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	gc := startGCShare()
	for n := 0; n < b.N; {
		out, _ := q.Receive(context.Background(), in)
		for _, m := range out {
			_ = q.Delete(m.ReceiptHandle)
			q.Send(SendInput{Body: "m"})
		}
		n += len(out)
	}
	gc.report(b)
}

// gcShare measures the collector's share of the process's CPU time over a
// benchmark: with a million messages queued it should be what it is with
// none, since queued messages hold no pointers.
type gcShare [2]float64

var gcSamples = []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}

func readGC() gcShare {
	metrics.Read(gcSamples)
	return gcShare{gcSamples[0].Value.Float64(), gcSamples[1].Value.Float64()}
}

func startGCShare() gcShare { return readGC() }

func (s gcShare) report(b *testing.B) {
	now := readGC()
	if total := now[1] - s[1]; total > 0 {
		b.ReportMetric(100*(now[0]-s[0])/total, "gc-%")
	}
}

func BenchmarkDrainAt10k(b *testing.B) { benchDrain(b, 10_000) }
func BenchmarkDrainAt1M(b *testing.B)  { benchDrain(b, 1_000_000) }

// BenchmarkSendAt1M sends 64-byte messages to a queue already holding a
// million: the collector's share should not grow with the backlog.
func BenchmarkSendAt1M(b *testing.B) {
	q := benchQueue(b)
	in := SendInput{Body: benchBody[:64]}
	for range 1_000_000 {
		q.Send(in)
	}
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	gc := startGCShare()
	for b.Loop() {
		if _, err := q.Send(in); err != nil {
			b.Fatal(err)
		}
	}
	gc.report(b)
}

// BenchmarkSendSmall sends 64-byte bodies: the engine's own cost, with
// little MD5 work (1 KiB of MD5 alone costs about a microsecond).
func BenchmarkSendSmall(b *testing.B) {
	q := benchQueue(b)
	in := SendInput{Body: benchBody[:64]}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Send(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidBody measures the character check of a 1 KiB ASCII body.
func BenchmarkValidBody(b *testing.B) {
	s := strings.Repeat("abcdefgh", 128)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if !validBody(s) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkRoundTrip sends a 1 KiB message to a queue, receives it and
// deletes it: a queue that never holds more than one message, whose bodies
// go among the shared bodies (smallStore).
func BenchmarkRoundTrip(b *testing.B) {
	q := benchQueue(b)
	in := SendInput{Body: benchBody}
	one := 1
	rin := ReceiveInput{MaxNumberOfMessages: &one, WaitTimeSeconds: new(int)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Send(in); err != nil {
			b.Fatal(err)
		}
		out, err := q.Receive(ctx, rin)
		if err != nil || len(out) != 1 {
			b.Fatal(len(out), err)
		}
		if err := q.Delete(out[0].ReceiptHandle); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendBatchSmall is a SendMessageBatch of ten 64-byte bodies, one
// with an attribute, into a reused buffer: the engine's share of the load
// tool's send-batch scenario. The queue is purged, untimed, every 1,000
// batches, so that the memory it writes is memory it has had before: what
// the host charges to fault fresh pages in would otherwise swamp the rest.
func BenchmarkSendBatchSmall(b *testing.B) {
	q := benchQueue(b)
	body := strings.Repeat("x", 64)
	entries := make([]SendBatchEntry, 10)
	for i := range entries {
		entries[i] = SendBatchEntry{ID: string(rune('a' + i)), SendInput: SendInput{Body: body}}
	}
	entries[0].Attributes = []MessageAttribute{{Name: "kind", DataType: "String", StringValue: "order"}}
	var buf SendBatchBuffer
	b.ReportAllocs()
	for i := range b.N {
		if i%1000 == 0 {
			b.StopTimer()
			if err := q.Purge(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, failed, err := q.SendBatchInto(&buf, entries); err != nil || len(failed) > 0 {
			b.Fatal(err, failed)
		}
	}
}
