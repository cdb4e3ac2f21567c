package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// memReport is what --memory measures.
type memReport struct {
	Messages       int     `json:"messages"`
	Subscriptions  int     `json:"subscriptions,omitempty"` // --memory-subs: queues holding each message
	BodyBytes      int     `json:"body_bytes"`
	FillSec        float64 `json:"fill_sec"`
	QueueDepth     int     `json:"queue_depth"`
	RSSBeforeKiB   int64   `json:"vmrss_before_kib"`
	RSSAfterKiB    int64   `json:"vmrss_after_kib"`
	HWMKiB         int64   `json:"vmhwm_kib"`
	HeapBeforeB    int64   `json:"live_heap_before_bytes,omitempty"`
	HeapAfterB     int64   `json:"live_heap_after_bytes,omitempty"`
	RSSPerMsgB     float64 `json:"vmrss_bytes_per_message"`
	HWMPerMsgB     float64 `json:"vmhwm_bytes_per_message"`
	HeapPerMsgB    float64 `json:"live_heap_bytes_per_message,omitempty"`
	HeapUnknownWhy string  `json:"live_heap_error,omitempty"`
}

// runMemory is --memory N: it starts a fresh fanout (with --pprof, for the
// live heap), creates one queue, pre-fills N --size messages with batch
// sends from --clients goroutines, checks the queue holds them, and prints
// VmRSS and VmHWM, before and after, per message. Per-message figures are
// the growth over the fresh server with its empty queue, divided by N.
func runMemory(ctx context.Context, cfg *config, bin string, report io.Writer) error {
	t, err := startProcess(ctx, "fanout", bin, "--log-level", "error", "--pprof")
	if err != nil {
		return err
	}
	defer t.stop()
	fmt.Fprintf(os.Stderr, "target fanout at %s (pid %d)\n", t.endpoint, t.pid())
	e := &env{
		cfg:    cfg,
		size:   cfg.size,
		tgt:    t,
		kind:   kindHTTP,
		ctl:    newSDKClient(t.endpoint, newSDKHTTPClient(2)),
		fill:   &rawClient{hc: newHTTPClient(cfg.clients), endpoint: t.endpoint},
		prefix: "fb-memory-" + strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36),
	}
	queues, topic, err := memoryQueues(ctx, e, cfg.memorySubs)
	if err != nil {
		return err
	}
	pid := t.pid()
	m := memReport{Messages: cfg.memory, Subscriptions: cfg.memorySubs, BodyBytes: cfg.size}
	var heapErr error
	m.HeapBeforeB, heapErr = liveHeap(ctx, t.endpoint)
	before, err := processStatus(pid, "VmRSS")
	if err != nil {
		return err
	}
	m.RSSBeforeKiB = before["VmRSS"]

	start := time.Now()
	if topic != "" {
		err = prefillPublish(ctx, e, topic, cfg.memory)
	} else {
		err = prefill(ctx, e, queues[0], cfg.memory)
	}
	if err != nil {
		return err
	}
	m.FillSec = time.Since(start).Seconds()
	after, err := processStatus(pid, "VmRSS", "VmHWM")
	if err != nil {
		return err
	}
	m.RSSAfterKiB, m.HWMKiB = after["VmRSS"], after["VmHWM"]
	m.QueueDepth = -1
	for _, q := range queues {
		d, err := e.ctl.queueDepth(ctx, q)
		if err != nil {
			return err
		}
		if m.QueueDepth < 0 || d < m.QueueDepth {
			m.QueueDepth = d // the shallowest queue
		}
	}
	if heapErr == nil {
		m.HeapAfterB, heapErr = liveHeap(ctx, t.endpoint)
	}
	if heapErr != nil {
		m.HeapUnknownWhy = heapErr.Error()
	}
	n := float64(cfg.memory)
	m.RSSPerMsgB = float64(m.RSSAfterKiB-m.RSSBeforeKiB) * 1024 / n
	m.HWMPerMsgB = float64(m.HWMKiB-m.RSSBeforeKiB) * 1024 / n
	if heapErr == nil {
		m.HeapPerMsgB = float64(m.HeapAfterB-m.HeapBeforeB) / n
	}
	// The queue goes with the server; deleting a million messages first
	// would only take time.

	printMemory(report, m)
	if m.QueueDepth != cfg.memory {
		fmt.Fprintf(report, "  warning: a queue holds %d messages, not %d\n", m.QueueDepth, cfg.memory)
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"memory": m})
	}
	return nil
}

// memoryQueues makes --memory's queue, or with subs > 0 a topic and subs
// queues subscribed to it with raw delivery.
func memoryQueues(ctx context.Context, e *env, subs int) (queues []string, topic string, err error) {
	if subs == 0 {
		q, _, err := e.newQueue(ctx, "", false)
		return []string{q}, "", err
	}
	if topic, err = e.ctl.createTopic(ctx, e.prefix); err != nil {
		return nil, "", err
	}
	for i := range subs {
		q, arn, err := e.newQueue(ctx, "-"+strconv.Itoa(i), false)
		if err != nil {
			return nil, "", err
		}
		if err := e.ctl.subscribe(ctx, topic, "sqs", arn, map[string]string{"RawMessageDelivery": "true"}); err != nil {
			return nil, "", err
		}
		queues = append(queues, q)
	}
	return queues, topic, nil
}

// prefillPublish publishes n --size messages to topic from --clients
// goroutines.
func prefillPublish(ctx context.Context, e *env, topic string, n int) error {
	body := payload(e.size)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, e.cfg.clients)
	for range e.cfg.clients {
		wg.Go(func() {
			for ctx.Err() == nil && next.Add(1) <= int64(n) {
				if err := e.fill.publish(ctx, topic, body, nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("pre-fill: %w", err)
	}
	return ctx.Err()
}

func printMemory(w io.Writer, m memReport) {
	mib := func(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
	if m.Subscriptions > 0 {
		fmt.Fprintf(w, "memory: %d messages of %d bytes published to a topic with %d raw SQS subscriptions in a fresh fanout in %.1fs (%.0f msgs/s); every queue holds %d\n",
			m.Messages, m.BodyBytes, m.Subscriptions, m.FillSec, float64(m.Messages)/m.FillSec, m.QueueDepth)
		fmt.Fprintf(w, "  VmRSS %s before, %s after: %.0f bytes per message published, %.0f per queued copy (%.2fx the body)\n",
			mib(m.RSSBeforeKiB), mib(m.RSSAfterKiB), m.RSSPerMsgB, m.RSSPerMsgB/float64(m.Subscriptions), m.RSSPerMsgB/float64(m.Subscriptions*m.BodyBytes))
	} else {
		fmt.Fprintf(w, "memory: %d messages of %d bytes queued in a fresh fanout in %.1fs (%.0f msgs/s); queue depth %d\n",
			m.Messages, m.BodyBytes, m.FillSec, float64(m.Messages)/m.FillSec, m.QueueDepth)
		fmt.Fprintf(w, "  VmRSS %s before, %s after: %.0f bytes per message (%.2fx the body)\n",
			mib(m.RSSBeforeKiB), mib(m.RSSAfterKiB), m.RSSPerMsgB, m.RSSPerMsgB/float64(m.BodyBytes))
	}
	fmt.Fprintf(w, "  VmHWM %s: %.0f bytes per message over the fresh server's VmRSS\n", mib(m.HWMKiB), m.HWMPerMsgB)
	if m.HeapUnknownWhy == "" {
		fmt.Fprintf(w, "  live heap after a GC %s before, %s after: %.0f bytes per message\n",
			mib(m.HeapBeforeB/1024), mib(m.HeapAfterB/1024), m.HeapPerMsgB)
	} else {
		fmt.Fprintf(w, "  live heap unknown: %s\n", m.HeapUnknownWhy)
	}
}

// liveHeap runs a GC in the server and returns its HeapAlloc, read from
// the text heap profile (GET /_fanout/debug/pprof/heap?gc=1&debug=1, served
// with --pprof).
func liveHeap(ctx context.Context, base string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_fanout/debug/pprof/heap?gc=1&debug=1", nil)
	if err != nil {
		return 0, err
	}
	hc := newHTTPClient(1)
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("heap profile: HTTP %d", resp.StatusCode)
	}
	return heapAllocOf(resp.Body)
}

// heapAllocOf finds "# HeapAlloc = N" in a debug=1 heap profile.
func heapAllocOf(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
			return strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("heap profile without HeapAlloc")
}
