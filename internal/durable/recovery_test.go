package durable

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/sqs"
)

// TestRecoveryProgram measures recovery of many stored messages, one phase
// per process, so that /usr/bin/time -v reports each alone. It runs only
// when FANOUT_RECOVERY_DIR is set:
//
//	go test -c -o rec.test ./internal/durable/
//	FANOUT_RECOVERY_DIR=/tmp/d FANOUT_RECOVERY_MODE=fill FANOUT_RECOVERY_BODY=64 ./rec.test -test.run RecoveryProgram -test.v
//	FANOUT_RECOVERY_DIR=/tmp/d FANOUT_RECOVERY_MODE=recover /usr/bin/time -v ./rec.test -test.run RecoveryProgram -test.v
//	FANOUT_RECOVERY_DIR=/tmp/d FANOUT_RECOVERY_MODE=recover FANOUT_RECOVERY_THREAD=1 ./rec.test -test.run RecoveryProgram -test.v
//	FANOUT_RECOVERY_DIR=/tmp/d FANOUT_RECOVERY_MODE=memory FANOUT_RECOVERY_BODY=64 /usr/bin/time -v ./rec.test -test.run RecoveryProgram -test.v
//
// fill stores FANOUT_RECOVERY_COUNT messages (default 1,000,000) of
// FANOUT_RECOVERY_BODY bytes (default 64) into 4 queues, through the engine
// and the op log, by SendMessageBatch from 32 senders, and receives a tenth
// of them (so that statuses are stored too); with FANOUT_RECOVERY_SNAPSHOT
// set it then compacts the log into a snapshot. recover opens the dir and
// restores the engine (with FANOUT_RECOVERY_THREAD set, it also reports
// the CPU time of the thread that recovers). memory does what fill does
// without a data dir, for the RSS an in-memory fanout needs for the same
// messages.
func TestRecoveryProgram(t *testing.T) {
	dir := os.Getenv("FANOUT_RECOVERY_DIR")
	if dir == "" {
		t.Skip("a measurement: set FANOUT_RECOVERY_DIR (see the comment)")
	}
	count := envInt("FANOUT_RECOVERY_COUNT", 1_000_000)
	body := strings.Repeat("x", envInt("FANOUT_RECOVERY_BODY", 64))
	clk := clock.NewManual(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	ns := Namespace{"000000000000", "us-east-1"}
	switch mode := os.Getenv("FANOUT_RECOVERY_MODE"); mode {
	case "fill", "memory":
		var e *sqs.Engine
		var log *oplog.Log
		if mode == "fill" {
			var err error
			o := oplog.Options{Mode: oplog.Relaxed, Snapshot: func(emit func(k, v []byte) error) error {
				return EmitSQS(e, ns, emit)
			}}
			if os.Getenv("FANOUT_RECOVERY_SNAPSHOT") == "none" {
				o.Snapshot = nil // everything stays in the log
			}
			log, _, err = oplog.Open(dir, o, NewRecovered().Load)
			if err != nil {
				t.Fatal(err)
			}
			e = sqs.New(sqs.Options{Clock: clk, Journal: SQSJournal(log, ns)})
		} else {
			e = sqs.New(sqs.Options{Clock: clk})
		}
		began := time.Now()
		fill(t, e, count, body)
		t.Logf("%s: %d messages of %d bytes in %v", mode, count, len(body), time.Since(began).Round(time.Millisecond))
		if log != nil {
			if os.Getenv("FANOUT_RECOVERY_SNAPSHOT") == "end" {
				if err := log.Compact(); err != nil {
					t.Fatal(err)
				}
			}
			if err := log.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("data dir: %d bytes", dirSize(t, dir))
		}
		reportRSS(t)
		runtime.KeepAlive(e)
	case "recover":
		// With FANOUT_RECOVERY_THREAD set the recovering goroutine keeps its
		// thread, so that the thread's CPU time is recovery's critical path:
		// what the second core takes over (checksums, the kernel's zeroing
		// of new memory) is not in it. Off by default: a locked goroutine
		// hands its thread over at every wait, which costs CPU of its own.
		locked := os.Getenv("FANOUT_RECOVERY_THREAD") != ""
		if locked {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		thread0 := threadCPU()
		began := time.Now()
		got := NewRecovered()
		e := sqs.New(sqs.Options{Clock: clk})
		log, rec, err := oplog.Open(dir, oplog.Options{LoaderCopies: true, Snapshot: func(emit func(k, v []byte) error) error {
			return EmitSQS(e, ns, emit)
		}}, got.Load)
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		opened := time.Since(began)
		if err := got.SQS(ns).Into(e); err != nil {
			t.Fatal(err)
		}
		total := time.Since(began)
		n := 0
		for _, name := range e.ListQueues("") {
			q, _ := e.Queue(name)
			attrs, _ := q.Attributes([]string{sqs.AttrApproximateNumberOfMessages, sqs.AttrApproximateNotVisible})
			for _, a := range attrs {
				v, _ := strconv.Atoi(a.Value)
				n += v
			}
		}
		t.Logf("recover: %d keys, %d messages: open and load %v, restore %v, total %v", rec.Keys, n,
			opened.Round(time.Millisecond), (total - opened).Round(time.Millisecond), total.Round(time.Millisecond))
		if locked {
			t.Logf("recover: the recovering thread's CPU %v", (threadCPU() - thread0).Round(time.Millisecond))
		}
		reportRSS(t)
		runtime.KeepAlive(e)
	default:
		t.Fatalf("FANOUT_RECOVERY_MODE %q: fill, recover or memory", mode)
	}
}

// threadCPU is the calling thread's user and system time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func fill(t *testing.T, e *sqs.Engine, count int, body string) {
	var queues []*sqs.Queue
	for k := range 4 {
		q, err := e.CreateQueue(fmt.Sprint("q", k), map[string]string{sqs.AttrMessageRetentionPeriod: "1209600"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	const senders = 32
	var wg sync.WaitGroup
	for w := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := queues[w%len(queues)]
			entries := make([]sqs.SendBatchEntry, 10)
			for i := range entries {
				entries[i] = sqs.SendBatchEntry{ID: fmt.Sprint("e", i), SendInput: sqs.SendInput{Body: body, SenderID: "AIDATEST"}}
			}
			for n := w * 10; n < count; n += senders * 10 {
				if _, _, err := q.SendBatch(entries[:min(10, count-n)]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, q := range queues {
		for range count / len(queues) / 10 / 10 {
			if _, err := q.Receive(context.Background(), sqs.ReceiveInput{MaxNumberOfMessages: intp(10), VisibilityTimeout: intp(3600), WaitTimeSeconds: intp(0)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// reportRSS logs the resident set after a collection that returns freed
// memory to the system, and the peak.
func reportRSS(t *testing.T) {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
			t.Log(strings.Join(strings.Fields(l), " "))
		}
	}
}

func dirSize(t *testing.T, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func intp(n int) *int { return &n }
