package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var build struct {
	once     sync.Once
	dir, bin string
	err      error
}

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// buildFanout builds cmd/fanout, once for the package's tests; a build
// failure fails the test (a crash test that cannot build what it crashes
// must not pass by skipping).
func buildFanout(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		if build.dir, build.err = os.MkdirTemp("", "crashtest"); build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "fanout")
		out, err := exec.Command("go", "build", "-o", build.bin, "github.com/fanout/fanout/cmd/fanout").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build cmd/fanout: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// freePort picks a loopback port; fanout is restarted on the same one so
// that queue URLs and SNS links stay the same across crashes.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is one run of the fanout binary.
type proc struct {
	cmd  *exec.Cmd
	url  string
	dir  string
	mu   sync.Mutex
	log  []string // the last lines of its stderr
	done chan struct{}

	recovery time.Duration // the "data dir opened" line's took=
	opened   string        // that line
	torn     int           // recovery lines saying a torn tail was dropped
}

var tookRE = regexp.MustCompile(`data dir opened.* took=(\S+)`)

// compaction is the test hook that makes fanout compact its log once the
// segments since the last snapshot hold more than 256 KiB and half the
// snapshot (rather than 8 MiB and twice it), so that kills land in the
// middle of snapshots: several compactions a cycle. Set either variable to
// choose another.
var compaction = map[string]string{"FANOUT_TEST_COMPACT_MIN": "262144", "FANOUT_TEST_COMPACT_RATIO": "0.5"}

const logLines = 40

// startFanout runs bin on dir (in memory without one) and waits until it
// listens; recovery of a large dir takes a while, so the wait is generous.
func startFanout(bin, dir string, port int) (*proc, error) {
	args := []string{"serve", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--log-level", "info"}
	if dir != "" {
		args = append(args, "--data-dir", dir)
		// e.g. "--durability relaxed --sync-interval 1s": a mode that may
		// lose acknowledged calls, to see that the loop notices.
		args = append(args, strings.Fields(os.Getenv("FANOUT_CRASH_FLAGS"))...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	for k, v := range compaction {
		if os.Getenv(k) == "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, dir: dir, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			if len(p.log) == logLines {
				p.log = p.log[1:]
			}
			p.log = append(p.log, line)
			if m := tookRE.FindStringSubmatch(line); m != nil {
				p.recovery, _ = time.ParseDuration(m[1])
				p.opened = line
			}
			if strings.Contains(line, "torn tail") {
				p.torn++
			}
			p.mu.Unlock()
			if strings.Contains(line, "fanout listening") {
				select {
				case ready <- line:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case <-ready:
		p.url = "http://127.0.0.1:" + strconv.Itoa(port)
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("fanout exited at start (%v):\n%s", cmd.ProcessState, p.tail())
	case <-time.After(60 * time.Second):
		p.kill()
		return nil, fmt.Errorf("fanout did not listen within 60 s:\n%s", p.tail())
	}
}

func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log, "\n")
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks for a clean shutdown (SIGTERM) and waits; it kills after 30 s.
func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("fanout did not stop within 30 s of SIGTERM")
	}
	if st := p.cmd.ProcessState; st != nil && !st.Success() {
		return fmt.Errorf("fanout exited with %v after SIGTERM:\n%s", st, p.tail())
	}
	return nil
}

// admin calls a /_fanout/ endpoint: body nil is a GET, else a JSON POST.
func (p *proc) admin(ctx context.Context, path string, body any, out any) error {
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, _ := json.Marshal(body)
		method, rd = http.MethodPost, bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.url+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// peeked is a message as GET /_fanout/sqs/queues/{name}/messages shows it.
type peeked struct {
	MessageID        string            `json:"messageId"`
	Body             string            `json:"body"`
	SystemAttributes map[string]string `json:"systemAttributes"`
	ReceiveCount     int               `json:"receiveCount"`
	State            string            `json:"state"`
}

// peekAll lists every message of a queue in one page (one look, so that
// no message moves from one state to another between looks; the workload
// keeps queues below the page's 1000).
func (p *proc) peekAll(ctx context.Context, queue string) ([]peeked, error) {
	var page struct {
		Messages []peeked `json:"messages"`
		More     bool     `json:"more"`
	}
	name, account, region := nameOf(queue)
	path := "/_fanout/sqs/queues/" + url.PathEscape(name) + "/messages?limit=1000"
	if account != "" {
		path += "&account=" + account + "&region=" + region
	}
	if err := p.admin(ctx, path, nil, &page); err != nil {
		return nil, err
	}
	if page.More {
		return nil, fmt.Errorf("queue %s holds more than 1000 messages: the harness cannot check it", queue)
	}
	return page.Messages, nil
}

// clockOffset is fanout's clock offset in seconds.
func (p *proc) clockOffset(ctx context.Context) (float64, error) {
	var v struct {
		OffsetSeconds float64 `json:"offsetSeconds"`
	}
	err := p.admin(ctx, "/_fanout/clock", nil, &v)
	return v.OffsetSeconds, err
}

// advance moves fanout's clock; the reply comes once what fell due ran.
func (p *proc) advance(ctx context.Context, d time.Duration) error {
	return p.admin(ctx, "/_fanout/clock", map[string]string{"advance": d.String()}, nil)
}

// recovered reports the recovery time, its log line and the torn tails of
// this start.
func (p *proc) recovered() (time.Duration, string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.recovery, p.opened, p.torn
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// snapshotFiles are the number of the newest complete snapshot in dir (one more per compaction: it is the number of the log segment the
// compaction began) and whether a snapshot was being written (its
// temporary file is there).
func snapshotFiles(dir string) (newest uint64, writing bool) {
	names, _ := filepath.Glob(filepath.Join(dir, "snap-*"))
	for _, n := range names {
		base := filepath.Base(n)
		if strings.HasSuffix(base, ".tmp") {
			writing = true
			continue
		}
		num, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(base, "snap-"), ".snap"), 16, 64)
		if err == nil && num > newest {
			newest = num
		}
	}
	return newest, writing
}
