package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"net/http"
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
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout/internal/sdktest"
)

// logLines collects a process's stderr lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
	eof   chan struct{} // closed when stderr is read to its end
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
	log := &logLines{eof: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(log.eof)
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

// stopBinary stops a binary started by startWithLog, once its last log
// line is read.
func stopBinary(t *testing.T, cmd *exec.Cmd, log *logLines) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		<-log.eof // Wait closes the pipe: read it all first
		done <- cmd.Wait()
	}()
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

// A fanout started with FANOUT_DATA_DIR keeps its topics, queues and
// messages across a restart
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
	topic, err := snsClient(ep).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("kept")})
	if err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(sdktest.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) })
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("kept")})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"one", "two"} {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: queue.QueueUrl, MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	stopBinary(t, cmd, log)
	if line, ok := log.find("ERROR"); ok {
		t.Errorf("an error on shutdown: %s", line)
	}

	cmd, ep, log = startWithLog(t, bin, nil, "--addr", "127.0.0.1:0", "--data-dir", dir, "--durability", "relaxed", "--sync-interval", "10ms")
	if line, ok := log.find("data dir opened", "durability=relaxed", "topics=1 ", "queues=1 messages=2 ", "took="); !ok {
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
	stopBinary(t, cmd, log)
}

// A data dir in a storage format this fanout does not read is refused, in
// one line that says what to do, with exit status 1.
func TestDataDirOfAnotherVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinary(t)
	cmd, _, log := startWithLog(t, bin, nil, "--addr", "127.0.0.1:0", "--data-dir", dir)
	stopBinary(t, cmd, log)

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

func countTopics(t *testing.T, c *sns.Client) int {
	t.Helper()
	n := 0
	for p := sns.NewListTopicsPaginator(c, &sns.ListTopicsInput{}); p.HasMorePages(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListTopics: %v", err)
		}
		n += len(page.Topics)
	}
	return n
}

// tmpfsHolder mounts a tmpfs of size on a fresh dir in a mount namespace of
// its own (the machine's mounts are untouched) and keeps it alive until the
// test ends; run commands there through nsenter. It skips where mount
// namespaces are not allowed (not root).
func tmpfsHolder(t *testing.T, size string) (pid, dir string) {
	t.Helper()
	if _, err := exec.LookPath("nsenter"); err != nil || os.Geteuid() != 0 ||
		exec.Command("unshare", "-m", "--propagation", "private", "true").Run() != nil {
		t.Skip("needs a mount namespace (root and unshare) for a real full or read-only disk")
	}
	dir = t.TempDir()
	holder := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o size="$1" tmpfs "$0" && echo mounted && exec sleep 600`, dir, size)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "mounted\n" {
		t.Skipf("mounting a tmpfs in a namespace: %q %v", line, err)
	}
	return strconv.Itoa(holder.Process.Pid), dir
}

// inHolder runs a command in the holder's mount namespace.
func inHolder(pid string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"-t", pid, "-m", "--"}, args...)...)
}

// A real full disk (a 1 MiB tmpfs): SNS writes answer 500 InternalError
// and SQS sends 500 InternalFailure,
// reads work, writes work again once there is room, and what was
// acknowledged is there at the next start. A start on the same dir made
// read-only is refused in one line.
func TestRealFullAndReadOnlyDisk(t *testing.T) {
	pid, dir := tmpfsHolder(t, "1m")
	bin := buildBinary(t)
	ctx := context.Background()
	cmd, ep, log := startWithLog(t, "nsenter", nil, "-t", pid, "-m", "--", bin, "--addr", "127.0.0.1:0", "--data-dir", dir)
	c := sns.NewFromConfig(sdktest.NoRetry(), func(o *sns.Options) { o.BaseEndpoint = aws.String(ep) })
	if _, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(sdktest.NoRetry(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) })
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("work")})
	if err != nil {
		t.Fatal(err)
	}
	_ = inHolder(pid, "sh", "-c", `cat /dev/zero > "$0/fill"`, dir).Run() // fails once the disk is full
	// The last page of the log may still take a small write: create
	// topics until the disk refuses one.
	acked := 1
	for ; ; acked++ {
		_, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t" + strconv.Itoa(acked))})
		if sdktest.IsError(err, "InternalError", http.StatusInternalServerError) {
			break
		}
		if err != nil || acked > 1000 {
			t.Fatalf("CreateTopic %d on a full disk: %v, want 500 InternalError", acked, err)
		}
	}
	if got := countTopics(t, c); got != acked {
		t.Fatalf("ListTopics on a full disk: %d topics, want the %d acknowledged", got, acked)
	}
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: queue.QueueUrl, MessageBody: aws.String(strings.Repeat("x", 10000))}); !sdktest.IsError(err, "InternalFailure", http.StatusInternalServerError) {
		t.Errorf("SendMessage on a full disk: %v, want 500 InternalFailure", err)
	}
	if got, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl, AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages"}}); err != nil || got.Attributes["ApproximateNumberOfMessages"] != "0" {
		t.Errorf("GetQueueAttributes on a full disk: %v %v, want 0 messages", got, err)
	}
	if line, ok := log.find("no space left on device", "answer 500 (nothing unstored is acknowledged)"); !ok {
		t.Errorf("no log line saying the disk is full: %q", log.lines)
	} else {
		t.Logf("%d topics acknowledged before the disk refused one; %s", acked, line)
	}
	if out, err := inHolder(pid, "rm", dir+"/fill").CombinedOutput(); err != nil {
		t.Fatalf("rm: %v %s", err, out)
	}
	if _, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("after")}); err != nil {
		t.Fatalf("CreateTopic once there is room: %v", err)
	}
	acked++
	stopBinary(t, cmd, log)

	cmd, ep, log = startWithLog(t, "nsenter", nil, "-t", pid, "-m", "--", bin, "--addr", "127.0.0.1:0", "--data-dir", dir)
	c = sns.NewFromConfig(sdktest.NoRetry(), func(o *sns.Options) { o.BaseEndpoint = aws.String(ep) })
	if got := countTopics(t, c); got != acked {
		t.Fatalf("topics after a restart: %d, want the %d acknowledged", got, acked)
	}
	stopBinary(t, cmd, log)

	// Read-only: refused at start, in one line that says what to do.
	if out, err := inHolder(pid, "mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v %s", err, out)
	}
	var stderr strings.Builder
	ro := inHolder(pid, bin, "--addr", "127.0.0.1:0", "--data-dir", dir)
	ro.Stderr = &stderr
	err = ro.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "data dir "+dir+" cannot be written") || !strings.Contains(stderr.String(), "read-only file system") {
		t.Fatalf("start on a read-only dir: %v, stderr %q", err, stderr.String())
	}
	t.Log(stderr.String())
}
