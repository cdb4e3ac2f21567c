package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// --cpu-profile DIR saves a CPU profile of the server for each timed
// phase, from the pprof endpoint of the fanouts this tool starts, so the
// cost of two runs (one queue and 100,000, say) can be compared with
// "go tool pprof -diff_base". The null and hello servers serve theirs on a
// second port, so fanout's profile can be set beside the null's.

var profileSeq atomic.Int64

// profilePath is where fanout (with --pprof) and the null server's profile
// listener serve a CPU profile.
const profilePath = "/_fanout/debug/pprof/profile"

// startCPUProfile asks the server for a CPU profile of about d (whole
// seconds, at least 1) and writes it under dir; wait returns where it went,
// or why not.
func startCPUProfile(ctx context.Context, dir string, t *target, name, kind string, d time.Duration) (wait func() string) {
	secs := max(int((d+time.Second/2)/time.Second), 1)
	path := filepath.Join(dir, fmt.Sprintf("%03d-%s-%s-%s.pprof", profileSeq.Add(1), t.name, kind, queueSafe(name)))
	done := make(chan string, 1)
	at := t.endpoint
	if t.profiler != "" {
		at = t.profiler
	}
	go func() { done <- fetchProfile(ctx, at, secs, path) }()
	return func() string { return <-done }
}

func fetchProfile(ctx context.Context, endpoint string, secs int, path string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
	defer cancel()
	url := fmt.Sprintf("%s%s?seconds=%d", endpoint, profilePath, secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "CPU profile: " + err.Error()
	}
	hc := newHTTPClient(1)
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return "CPU profile: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("CPU profile: HTTP %d (does the server run with --pprof?)", resp.StatusCode)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "CPU profile: " + err.Error()
	}
	f, err := os.Create(path)
	if err != nil {
		return "CPU profile: " + err.Error()
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return "CPU profile: " + err.Error()
	}
	if err := f.Close(); err != nil {
		return "CPU profile: " + err.Error()
	}
	return "CPU profile of the timed phase: " + path
}
