package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// target is one server under test: a subprocess this tool started (fanout or
// the null server) or an already running server given by URL.
type target struct {
	name     string // "fanout", "null" or the URL
	endpoint string // base URL without trailing slash
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has exited
	dataDir  string        // fanout-strict, fanout-relaxed: its --data-dir, removed by stop
	profiler string        // base URL of a CPU profile served apart from endpoint ("": endpoint's)
}

// startTarget launches the subprocess for name ("fanout" or "null") or wraps
// a URL. bin is the fanout binary (built beforehand); sizes are the body
// sizes of the null server's canned messages. fanout runs with --pprof for
// its /_fanout/debug/runtime metrics (the fill scenario's GC share).
func startTarget(ctx context.Context, name, bin string, sizes []int) (*target, error) {
	switch name {
	case "fanout", "fanout-base":
		return startProcess(ctx, name, bin, "--log-level", "error", "--pprof")
	case "fanout-info":
		// The default level: the request log runs and writes failed calls.
		return startProcess(ctx, name, bin, "--log-level", "info")
	case "fanout-log":
		// Every call logged, as JSON, written to /dev/null: the cost of
		// the request log is formatting and writing, not the terminal.
		t, err := startProcessQuiet(ctx, name, bin, "--log-level", "debug", "--log-format", "json")
		return t, err
	case "fanout-strict", "fanout-relaxed", "fanout-base-strict", "fanout-base-relaxed":
		// The same fanout with a data dir of its own: what durability costs.
		dir, err := os.MkdirTemp("", "fanout-bench-data-")
		if err != nil {
			return nil, err
		}
		t, err := startProcess(ctx, name, bin, "--log-level", "error", "--pprof",
			"--data-dir", dir, "--durability", name[strings.LastIndexByte(name, '-')+1:])
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		t.dataDir = dir
		return t, nil
	case "null":
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return startProcess(ctx, "null", self, "--body-sizes", intsCSV(sizes))
	case "null-store":
		// The null server keeping what is sent: storing's own cost.
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return startProcess(ctx, "null-store", self, "--body-sizes", intsCSV(sizes), "--serve-store")
	case "hello":
		// The floor under the null server: read the body, answer 200.
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return startProcess(ctx, "hello", self, "--serve-hello")
	}
	u, err := url.Parse(name)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("target %q: want fanout, null, both or an http URL", name)
	}
	if err := checkLoopback(u.Hostname()); err != nil {
		return nil, err
	}
	t := &target{name: name, endpoint: strings.TrimRight(u.Scheme+"://"+u.Host, "/")}
	return t, waitHealthy(ctx, t, 10*time.Second)
}

// checkLoopback refuses hosts that do not resolve only to loopback addresses.
func checkLoopback(host string) error {
	ips, err := net.LookupIP(host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("target host %s is not loopback (%s); only this machine may be loaded", host, ip)
		}
	}
	return nil
}

// startProcess runs bin with args plus an address flag on a free loopback
// port and waits until it answers the health check.
func startProcess(ctx context.Context, name, bin string, args ...string) (*target, error) {
	return launch(ctx, name, bin, false, args...)
}

// startProcessQuiet is startProcess with the server's output discarded.
func startProcessQuiet(ctx context.Context, name, bin string, args ...string) (*target, error) {
	return launch(ctx, name, bin, true, args...)
}

func launch(ctx context.Context, name, bin string, quiet bool, args ...string) (*target, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	profiler := ""
	if isNull(name) || name == "hello" {
		pport, err := freePort()
		if err != nil {
			return nil, err
		}
		profiler = "127.0.0.1:" + strconv.Itoa(pport)
		args = append(args, "--serve-pprof", profiler, "--serve-null", addr)
		profiler = "http://" + profiler
	} else {
		args = append([]string{"--addr", addr}, args...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = os.Stderr // keep our stdout for results
	cmd.Stderr = os.Stderr
	if quiet {
		cmd.Stdout, cmd.Stderr = nil, nil // /dev/null
	}
	// If this tool dies without cleaning up, the kernel stops the server too.
	// Its own process group keeps a terminal's Ctrl-C away from the server,
	// so this tool can still delete its queues and then stop it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	t := &target{name: name, endpoint: "http://" + addr, profiler: profiler, cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(t.exited) }()
	if err := waitHealthy(ctx, t, 20*time.Second); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// freePort asks the kernel for an unused loopback port. Another process could
// take it before the server binds; the health check would then fail loudly.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHealthy polls GET /_fanout/health until it answers 200.
func waitHealthy(ctx context.Context, t *target, limit time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for {
		resp, err := hc.Get(t.endpoint + "/_fanout/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if t.exited != nil {
			select {
			case <-t.exited:
				return fmt.Errorf("%s exited before becoming healthy", t.name)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy at %s after %v (last error: %v)", t.name, t.endpoint, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits; a server that ignores it is killed after 5 s.
// A data dir goes with it.
func (t *target) stop() {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	if t.dataDir != "" {
		defer os.RemoveAll(t.dataDir)
	}
	select {
	case <-t.exited:
		return
	default:
	}
	t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-t.exited:
	case <-time.After(5 * time.Second):
		t.cmd.Process.Kill()
		<-t.exited
	}
}

// alive reports whether a subprocess target is still running (always true
// for a URL target).
func (t *target) alive() bool {
	if t.exited == nil {
		return true
	}
	select {
	case <-t.exited:
		return false
	default:
		return true
	}
}

// pid is the server's process id, or 0 when this tool did not start it.
func (t *target) pid() int {
	if t.cmd == nil || t.cmd.Process == nil {
		return 0
	}
	return t.cmd.Process.Pid
}

// clockTick is the kernel's clock tick length, the unit of /proc/<pid>/stat
// times; getconf CLK_TCK reports it (100 on practically every Linux).
var clockTick = sync.OnceValue(func() time.Duration {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if hz, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && hz > 0 {
			return time.Second / time.Duration(hz)
		}
	}
	return 10 * time.Millisecond
})

// processCPU returns user+system CPU time of pid from /proc/<pid>/stat.
func processCPU(pid int, tick time.Duration) (time.Duration, error) {
	user, sys, err := processTimes(pid, tick)
	return user + sys, err
}

// processTimes returns the user and the system CPU time of pid from
// /proc/<pid>/stat.
func processTimes(pid int, tick time.Duration) (user, sys time.Duration, err error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may contain spaces; fields resume after ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	return time.Duration(ut) * tick, time.Duration(st) * tick, nil
}

// dirBytes is the size of the files directly in dir (a data dir is flat).
func dirBytes(dir string) int64 {
	ents, _ := os.ReadDir(dir)
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// processRSS returns VmRSS of pid in KiB from /proc/<pid>/status.
func processRSS(pid int) (int64, error) {
	m, err := processStatus(pid, "VmRSS")
	return m["VmRSS"], err
}

// processStatus returns the named kB fields (VmRSS, VmHWM, ...) of
// /proc/<pid>/status in KiB; it fails if one is missing.
func processStatus(pid int, fields ...string) (map[string]int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, err
	}
	return parseStatus(string(data), fields...)
}

func parseStatus(data string, fields ...string) (map[string]int64, error) {
	out := make(map[string]int64, len(fields))
	for line := range strings.SplitSeq(data, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(fields, name) {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc status %s: %w", name, err)
		}
		out[name] = v
	}
	for _, f := range fields {
		if _, ok := out[f]; !ok {
			return nil, fmt.Errorf("/proc status has no %s", f)
		}
	}
	return out, nil
}

// selfCPU returns this process's user+system CPU time, to show how busy the
// load generator itself is (on a small machine it competes with the server).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildFanout builds ./cmd/fanout of the enclosing module into dir.
func buildFanout(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", errors.New("cannot find the fanout module (run from inside the repository or pass --fanout-bin)")
	}
	bin := filepath.Join(dir, "fanout")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/fanout")
	cmd.Dir = filepath.Dir(mod)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/fanout: %w", err)
	}
	return bin, nil
}

func intsCSV(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
