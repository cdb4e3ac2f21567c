package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// churnReport is what --churn measures: the data dir's size while N
// messages pass through one small queue, which compaction must keep
// proportional to what is stored, not to what was ever written.
type churnReport struct {
	Messages      int64   `json:"messages"`
	BodyBytes     int     `json:"body_bytes"`
	Durability    string  `json:"durability"`
	Seconds       float64 `json:"seconds"`
	MaxDepth      int     `json:"max_queue_depth_sampled"`
	FinalDepth    int     `json:"final_queue_depth"`
	MaxDirBytes   int64   `json:"max_data_dir_bytes"`
	FinalDirBytes int64   `json:"final_data_dir_bytes"`
	// WrittenBytes adds up the data dir's growth between samples: a lower
	// bound of what the log would hold without compaction.
	WrittenBytes int64   `json:"log_growth_bytes_sampled"`
	RecoverySec  float64 `json:"recovery_sec"`
	RecoveredDir int64   `json:"data_dir_bytes_after_restart"`
	Errors       int64   `json:"errors"`
}

// runChurn is --churn N: a fresh fanout with a data dir (fanout-strict, or
// fanout-relaxed with --target fanout-relaxed), one queue, --clients
// workers that each send a batch of 10 --size messages, receive what is
// there and delete it, until N messages were sent; the data dir's size is
// sampled every second. Then fanout is restarted on the dir, timed until
// healthy.
func runChurn(ctx context.Context, cfg *config, bin string, report io.Writer) error {
	name := cfg.targets[0]
	mode := strings.TrimPrefix(name, "fanout-")
	dir, err := os.MkdirTemp("", "fanout-bench-churn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := []string{"--log-level", "error", "--data-dir", dir, "--durability", mode}
	t, err := startProcess(ctx, name, bin, args...)
	if err != nil {
		return err
	}
	defer t.stop()
	fmt.Fprintf(os.Stderr, "target %s at %s (pid %d), data dir %s\n", name, t.endpoint, t.pid(), dir)
	e := &env{cfg: cfg, size: cfg.size, tgt: t, kind: kindHTTP,
		ctl:    newSDKClient(t.endpoint, newSDKHTTPClient(2)),
		prefix: "fb-churn-" + strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)}
	q, _, err := e.newQueue(ctx, "", false)
	if err != nil {
		return err
	}
	e.cleanups = nil // the queue goes with the data dir
	dp := &rawClient{hc: newHTTPClient(cfg.clients), endpoint: t.endpoint}

	r := churnReport{Messages: int64(cfg.churn), BodyBytes: cfg.size, Durability: mode}
	var sent, errs atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		if errs.Add(1) == 1 {
			firstErr.Store(err)
		}
	}
	done := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		lastReport := time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			n := dirBytes(dir)
			r.MaxDirBytes = max(r.MaxDirBytes, n)
			if d, err := e.ctl.queueDepth(ctx, q); err == nil {
				r.MaxDepth = max(r.MaxDepth, d)
			}
			if time.Since(lastReport) >= 10*time.Second {
				lastReport = time.Now()
				fmt.Fprintf(os.Stderr, "churn: %d of %d sent, data dir %.1f MiB\n", sent.Load(), cfg.churn, float64(n)/(1<<20))
			}
		}
	})
	start := time.Now()
	es := batchOf(10, cfg.size)
	var workers sync.WaitGroup
	for range cfg.clients {
		workers.Go(func() {
			for ctx.Err() == nil && sent.Add(10) <= int64(cfg.churn) {
				if err := dp.sendMessageBatch(ctx, q, es); err != nil {
					fail(err)
					continue
				}
				msgs, err := dp.receiveMessage(ctx, q, 10, 0)
				if err != nil {
					fail(err)
					continue
				}
				if len(msgs) == 0 {
					continue
				}
				handles := make([]string, len(msgs))
				for i, m := range msgs {
					handles[i] = m.receiptHandle
				}
				if err := dp.deleteMessageBatch(ctx, q, handles); err != nil {
					fail(err)
				}
			}
		})
	}
	workers.Wait()
	r.Seconds = time.Since(start).Seconds()
	close(done)
	sampler.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// What is left: drain it, so the final state is an empty queue.
	for {
		msgs, err := dp.receiveMessage(ctx, q, 10, 0)
		if err != nil || len(msgs) == 0 {
			break
		}
		handles := make([]string, len(msgs))
		for i, m := range msgs {
			handles[i] = m.receiptHandle
		}
		if err := dp.deleteMessageBatch(ctx, q, handles); err != nil {
			fail(err)
			break
		}
	}
	if r.FinalDepth, err = e.ctl.queueDepth(ctx, q); err != nil {
		return err
	}
	r.FinalDirBytes = dirBytes(dir)
	r.Errors = errs.Load()
	if io, err := processIO(t.pid()); err == nil {
		r.WrittenBytes = io
	}

	t.stop()
	began := time.Now()
	t2, err := startProcess(ctx, name, bin, args...)
	if err != nil {
		return fmt.Errorf("restart on the data dir: %w", err)
	}
	r.RecoverySec = time.Since(began).Seconds()
	r.RecoveredDir = dirBytes(dir)
	t2.stop()

	printChurn(report, r)
	if v := firstErr.Load(); v != nil {
		fmt.Fprintf(report, "  first error: %v\n", v)
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"churn": r})
	}
	if r.Errors > 0 {
		return errors.New("churn: some calls failed")
	}
	return nil
}

func printChurn(w io.Writer, r churnReport) {
	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "churn: %d messages of %d bytes sent, received and deleted through one queue (%s) in %.0fs (%.0f msgs/s), %d errors\n",
		r.Messages, r.BodyBytes, r.Durability, r.Seconds, float64(r.Messages)/r.Seconds, r.Errors)
	fmt.Fprintf(w, "  queue depth at most %d (sampled), %d at the end\n", r.MaxDepth, r.FinalDepth)
	fmt.Fprintf(w, "  data dir at most %s, %s at the end; fanout wrote %s to disk (log and snapshots): the dir held at most %.4f of that\n",
		mib(r.MaxDirBytes), mib(r.FinalDirBytes), mib(r.WrittenBytes), float64(r.MaxDirBytes)/float64(max(r.WrittenBytes, 1)))
	fmt.Fprintf(w, "  restart on it: healthy after %.2fs, data dir %s\n", r.RecoverySec, mib(r.RecoveredDir))
}

// processIO is write_bytes of /proc/PID/io: what the process made the
// kernel write to storage.
func processIO(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no write_bytes in /proc/PID/io")
}
