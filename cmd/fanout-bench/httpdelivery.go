package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// fastRetryPolicy retries a failed HTTP delivery at once, three times: four
// attempts in all, with no wait between them, so a failing endpoint costs
// attempts rather than time.
const (
	fastRetryPolicy   = `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":3,"numNoDelayRetries":3,"backoffFunction":"linear"}}`
	fastRetryAttempts = 4
)

// prepareHTTPDelivery returns the prepare function of http-delivery (raw)
// and http-delivery-signed (envelopes).
func prepareHTTPDelivery(raw bool) func(ctx context.Context, e *env) (*workload, error) {
	return func(ctx context.Context, e *env) (*workload, error) {
		s := newSink(e.sinkFail, fastRetryAttempts, e.cfg.window)
		if err := s.start(); err != nil {
			return nil, err
		}
		// Cleanups run last first: the sink closes after the topic is gone.
		e.cleanups = append(e.cleanups, func(context.Context) error { s.close(); return nil })
		topic, err := e.ctl.createTopic(ctx, e.prefix)
		if err != nil {
			return nil, err
		}
		e.cleanups = append(e.cleanups, func(ctx context.Context) error { return e.ctl.deleteTopic(ctx, topic) })
		attrs := map[string]string{"RawMessageDelivery": strconv.FormatBool(raw), "DeliveryPolicy": fastRetryPolicy}
		err = e.ctl.subscribe(ctx, topic, "http", s.url, attrs)
		s.markSubscribed()
		if err != nil {
			return nil, err
		}
		if err := s.waitConfirmed(ctx, 20*time.Second); err != nil {
			return nil, fmt.Errorf("sink subscription: %w", err)
		}
		if n := e.cfg.hanging; n > 0 {
			h, err := startHangingSinks()
			if err != nil {
				return nil, err
			}
			e.cleanups = append(e.cleanups, func(context.Context) error { h.close(); return nil })
			for i := 0; i < n; i++ {
				if err := e.ctl.subscribe(ctx, topic, "http", h.url(i), attrs); err != nil {
					return nil, err
				}
			}
			if err := h.waitConfirmed(ctx, n, 20*time.Second); err != nil {
				return nil, err
			}
			e.notes = append(e.notes, fmt.Sprintf("%d more subscriptions of the topic never answer a notification (--hanging): fanout gives up on each attempt at its endpoint timeout", n))
		}
		e.notes = append(e.notes, fmt.Sprintf("sink %s, raw delivery %v, at most %d messages undelivered, sink fails %g of requests",
			s.url, raw, e.cfg.window, e.sinkFail))

		var waits atomic.Int64 // publishes that found the window full
		pad := payload(e.size)
		wl := &workload{}
		wl.step = func(ctx context.Context, w *worker) error {
			if len(s.slots) == cap(s.slots) && w.ph.timed {
				waits.Add(1)
			}
			if !s.acquire(w.ph.stop.Done()) {
				return errStop
			}
			body := stampedBody(pad)
			err := w.do("publish", func() (int, error) { return 1, e.dp.publish(ctx, topic, body, nil) })
			if err != nil {
				s.release()
			}
			return err
		}
		wl.receivers = append(wl.receivers, func(_ context.Context, w *worker) { sinkReceiver(w, s) })
		wl.finish = func(ctx context.Context, stats statSet) []string {
			var notes []string
			if left := s.waitResolved(ctx, 5*time.Second, 30*time.Second); left > 0 {
				notes = append(notes, fmt.Sprintf("%d messages were still undelivered 5s after the last request reached the sink", left))
			}
			notes = append(notes, sinkNotes(stats, e.sinkFail, s.maxAttempts, waits.Load())...)
			if n := s.lost.Load(); n > 0 {
				notes = append(notes, fmt.Sprintf("%d sink events were lost (receiver behind): the counts above are low", n))
			}
			// fanout counts an attempt once it has read the answer, a
			// moment after the sink counted it: wait for it to catch up.
			c, err := fanoutCounts(ctx, e.tgt.endpoint, s.url)
			for deadline := time.Now().Add(2 * time.Second); err == nil && c.Delivered+c.Failed < s.requests.Load() && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				c, err = fanoutCounts(ctx, e.tgt.endpoint, s.url)
			}
			if err == nil {
				notes = append(notes, fmt.Sprintf("fanout's counts for the subscription, warm-up included: %d delivered, %d failed attempts, %d dropped; the sink's: %d requests, %d resolved",
					c.Delivered, c.Failed, c.Dropped, s.requests.Load(), s.resolved.Load()))
			}
			return notes
		}
		return wl, nil
	}
}

// sinkReceiver turns the sink's events into the phase's stats until the
// phase ends: attempt counts every request (errors are the 500s),
// delivered every 200 with its publish-to-delivery latency, gave-up the
// messages whose last attempt failed.
func sinkReceiver(w *worker, s *sink) {
	stop := w.ph.stop.Done()
	for {
		select {
		case ev := <-s.events:
			recordSinkEvent(w, ev)
		case <-stop:
			return
		}
	}
}

func recordSinkEvent(w *worker, ev sinkEvent) {
	// Requests answered between phases belong to neither.
	if ev.recv.Before(w.ph.start) || ev.recv.After(w.ph.end) {
		return
	}
	a := w.stats.op("attempt")
	a.calls++
	switch ev.outcome {
	case sinkDelivered:
		a.messages++
		// Messages published before the phase would overstate latency.
		if !ev.sent.IsZero() && !ev.sent.Before(w.ph.start) {
			w.sample("delivered", ev.recv.Sub(ev.sent))
		} else {
			w.stats.op("delivered").messages++
		}
	default:
		a.errors++
		if a.firstErr == "" {
			a.firstErr = "HTTP 500 from the sink (--sink-fail)"
		}
		if ev.outcome == sinkGaveUp {
			w.stats.op("gave-up").messages++
		}
	}
}

// sinkNotes sums up the timed phase's attempts.
func sinkNotes(stats statSet, failRate float64, maxAttempts int, waits int64) []string {
	var attempts, delivered, gaveUp uint64
	if st := stats["attempt"]; st != nil {
		attempts = st.calls
	}
	if st := stats["delivered"]; st != nil {
		delivered = st.messages
	}
	if st := stats["gave-up"]; st != nil {
		gaveUp = st.messages
	}
	var notes []string
	if n := delivered + gaveUp; n > 0 {
		line := fmt.Sprintf("sink: %.3f attempts per message (%d attempts; %d messages delivered, %d given up after %d attempts)",
			float64(attempts)/float64(n), attempts, delivered, gaveUp, maxAttempts)
		if failRate > 0 {
			exp, ok := expectedAttempts(failRate, maxAttempts)
			line += fmt.Sprintf("; at --sink-fail %g expect %.3f and %.2f%% delivered", failRate, exp, 100*ok)
		}
		notes = append(notes, line)
	}
	if waits > 0 {
		notes = append(notes, fmt.Sprintf("publishers found the window full %d times: delivery was the bottleneck, and latency includes the wait behind up to --window messages", waits))
	}
	return notes
}

// subCounts are one subscription's counts in GET /_fanout/sns/deliveries.
type subCounts struct {
	Endpoint  string
	Delivered int64
	Failed    int64
	Dropped   int64
}

// fanoutCounts reads fanout's delivery counts for the subscription of
// endpoint (a URL target that is not fanout has none: an error).
func fanoutCounts(ctx context.Context, base, endpoint string) (subCounts, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_fanout/sns/deliveries?endpoint="+url.QueryEscape(endpoint), nil)
	if err != nil {
		return subCounts{}, err
	}
	hc := newHTTPClient(1)
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return subCounts{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return subCounts{}, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var out struct{ Subscriptions []subCounts }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return subCounts{}, err
	}
	for _, c := range out.Subscriptions {
		if c.Endpoint == endpoint {
			return c, nil
		}
	}
	return subCounts{}, fmt.Errorf("no counts for %s", endpoint)
}
