package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/fanout/fanout/internal/sdktest"
)

// logLines collects a process's stderr lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

// find returns the first line holding every one of want.
func (l *logLines) find(want ...string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, line := range l.lines {
		for _, w := range want {
			if !strings.Contains(line, w) {
				continue next
			}
		}
		return line, true
	}
	return "", false
}

// startWithLog runs the binary until it logs its endpoint and keeps its
// stderr lines.
func startWithLog(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, string, *logLines) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	log := &logLines{}
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			log.add(lines.Text())
			if m := endpointRE.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case ep := <-found:
		return cmd, ep, log
	case <-time.After(10 * time.Second):
		t.Fatalf("fanout did not log its endpoint: %q", log.lines)
	}
	return nil, "", nil
}

func stopBinary(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit after SIGTERM")
	}
}

func snsClient(ep string) *sns.Client {
	return sns.NewFromConfig(sdktest.Config(), func(o *sns.Options) { o.BaseEndpoint = aws.String(ep) })
}

// A fanout started with FANOUT_DATA_DIR keeps its topics across a restart
// (the second start with --data-dir and relaxed durability), logs where its
// data lives, and a second fanout on the same dir is refused while the
// first runs.
func TestBinaryKeepsStateInDataDir(t *testing.T) {
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()

	cmd, ep, log := startWithLog(t, bin, []string{"FANOUT_DATA_DIR=" + dir}, "--addr", "127.0.0.1:0")
	if line, ok := log.find("data dir opened", "dir="+dir); !ok {
		t.Errorf("no start-up line naming the data dir: %q", log.lines)
	} else {
		t.Log(line)
	}
	if _, ok := log.find("WARN", "SQS queues and messages are not yet kept"); !ok { // until the SQS engines journal
		t.Errorf("no warning that SQS state is not kept: %q", log.lines)
	}
	topic, err := snsClient(ep).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("kept")})
	if err != nil {
		t.Fatal(err)
	}
	stopBinary(t, cmd)

	cmd, ep, log = startWithLog(t, bin, nil, "--addr", "127.0.0.1:0", "--data-dir", dir, "--durability", "relaxed", "--sync-interval", "10ms")
	if line, ok := log.find("data dir opened", "durability=relaxed", "topics=1 ", "took="); !ok {
		t.Errorf("no start-up line saying what was restored: %q", log.lines)
	} else {
		t.Log(line)
	}
	out, err := snsClient(ep).GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: topic.TopicArn})
	if err != nil {
		t.Fatalf("the topic after a restart: %v", err)
	}
	if out.Attributes["TopicArn"] != aws.ToString(topic.TopicArn) {
		t.Fatalf("attributes %v", out.Attributes)
	}

	// While it runs, the dir is locked.
	var stdout, stderr strings.Builder
	status := cli([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "error"}, &stdout, &stderr)
	if status != exitError || !strings.Contains(stderr.String(), "data dir is in use") ||
		!strings.Contains(stderr.String(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("a second fanout on the dir: status %d, stderr %q", status, stderr.String())
	}
	stopBinary(t, cmd)
}

// A data dir in a storage format this fanout does not read is refused, in
// one line that says what to do, with exit status 1.
func TestDataDirOfAnotherVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinary(t)
	cmd, _, _ := startWithLog(t, bin, nil, "--addr", "127.0.0.1:0", "--data-dir", dir)
	stopBinary(t, cmd)

	segs, _ := filepath.Glob(filepath.Join(dir, "log-*.wal"))
	if len(segs) == 0 {
		t.Fatal("no log segment written")
	}
	for _, seg := range segs { // as a later fanout with format 99 would write them
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[8:], 99)
		binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[:12], crc32.MakeTable(crc32.Castagnoli)))
		if err := os.WriteFile(seg, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr strings.Builder
	status := cli([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, &stdout, &stderr)
	e := stderr.String()
	if status != exitError || strings.Count(e, "\n") != 1 ||
		!strings.Contains(e, "storage format 99") || !strings.Contains(e, dir) || !strings.Contains(e, "fresh data dir") {
		t.Fatalf("status %d, stderr %q", status, e)
	}
}
