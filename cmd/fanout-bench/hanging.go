package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// hangingSinks are the endpoints of http-delivery's --hanging option: one
// loopback server with a path per subscription, which confirms its
// subscriptions like the sink does and then never answers a notification
// (it holds the request until fanout gives up on it or the run ends), as a
// dead or wedged endpoint does.
type hangingSinks struct {
	base string
	srv  *http.Server
	stop chan struct{}
	once sync.Once
	// confirm is the sink's confirmation logic, shared.
	confirm   *sink
	confirmed atomic.Int64
}

func startHangingSinks() (*hangingSinks, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hangingSinks{base: "http://" + ln.Addr().String(), stop: make(chan struct{}), confirm: newSink(0, 1, 1)}
	h.confirm.markSubscribed()
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go h.srv.Serve(ln)
	return h, nil
}

// url is the endpoint of hanging subscription i.
func (h *hangingSinks) url(i int) string { return fmt.Sprintf("%s/hang/%d", h.base, i) }

func (h *hangingSinks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if r.Header.Get("X-Amz-Sns-Message-Type") == "SubscriptionConfirmation" {
		go func() {
			h.confirm.confirm(body)
			h.confirmed.Add(1)
		}()
		return
	}
	select {
	case <-r.Context().Done():
	case <-h.stop:
	}
}

// waitConfirmed waits until n subscriptions are confirmed.
func (h *hangingSinks) waitConfirmed(ctx context.Context, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for h.confirmed.Load() < int64(n) {
		if p := h.confirm.confirmErr.Load(); p != nil {
			return errors.New(*p)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d of %d hanging subscriptions confirmed within %v", h.confirmed.Load(), n, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (h *hangingSinks) close() {
	h.once.Do(func() { close(h.stop) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
	_ = h.srv.Close()
	h.confirm.close()
}
