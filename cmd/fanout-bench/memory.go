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
	"time"
)

// memReport is what --memory measures.
type memReport struct {
	Messages       int     `json:"messages"`
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
	q, _, err := e.newQueue(ctx, "", false)
	if err != nil {
		return err
	}
	pid := t.pid()
	m := memReport{Messages: cfg.memory, BodyBytes: cfg.size}
	var heapErr error
	m.HeapBeforeB, heapErr = liveHeap(ctx, t.endpoint)
	before, err := processStatus(pid, "VmRSS")
	if err != nil {
		return err
	}
	m.RSSBeforeKiB = before["VmRSS"]

	start := time.Now()
	if err := prefill(ctx, e, q, cfg.memory); err != nil {
		return err
	}
	m.FillSec = time.Since(start).Seconds()
	after, err := processStatus(pid, "VmRSS", "VmHWM")
	if err != nil {
		return err
	}
	m.RSSAfterKiB, m.HWMKiB = after["VmRSS"], after["VmHWM"]
	if m.QueueDepth, err = e.ctl.queueDepth(ctx, q); err != nil {
		return err
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
		fmt.Fprintf(report, "  warning: the queue holds %d messages, not %d\n", m.QueueDepth, cfg.memory)
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"memory": m})
	}
	return nil
}

func printMemory(w io.Writer, m memReport) {
	mib := func(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
	fmt.Fprintf(w, "memory: %d messages of %d bytes queued in a fresh fanout in %.1fs (%.0f msgs/s); queue depth %d\n",
		m.Messages, m.BodyBytes, m.FillSec, float64(m.Messages)/m.FillSec, m.QueueDepth)
	fmt.Fprintf(w, "  VmRSS %s before, %s after: %.0f bytes per message (%.2fx the body)\n",
		mib(m.RSSBeforeKiB), mib(m.RSSAfterKiB), m.RSSPerMsgB, m.RSSPerMsgB/float64(m.BodyBytes))
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
