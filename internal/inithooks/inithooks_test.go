package inithooks_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/inithooks"
)

const cli = "/usr/bin/aws"

func needCLI(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
			t.Fatal("/usr/bin/aws (Debian's awscli package) is required")
		}
		t.Skip("needs /usr/bin/aws (Debian's awscli package)")
	}
}

// syncBuffer is a log sink the scripts' output goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func write(t *testing.T, dir, name, body string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// TestScripts runs a LocalStack-style ready.d directory against fanout:
// the AWS CLI with --endpoint-url, awslocal, a script that is not
// executable, one that fails, and one after it.
func TestScripts(t *testing.T) {
	needCLI(t)
	// awslocal runs "aws" from PATH: make it Debian's CLI, whatever else is installed.
	bin := t.TempDir()
	if err := os.Symlink(cli, filepath.Join(bin, "aws")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	dir := t.TempDir()
	write(t, dir, "01-queue.sh", "#!/bin/sh\nset -e\n/usr/bin/aws --endpoint-url \"$AWS_ENDPOINT_URL\" sqs create-queue --queue-name from-hook --output text\n", 0o755)
	write(t, dir, "02-awslocal.sh", "#!/bin/sh\nset -e\nawslocal sns create-topic --name from-awslocal --output text\n", 0o755)
	write(t, dir, "03-readme.txt", "not a script\n", 0o644)
	write(t, dir, "04-fails.sh", "#!/bin/sh\necho about to fail >&2\nexit 3\n", 0o755)
	write(t, dir, "05-after.sh", "#!/bin/sh\necho region=$AWS_REGION default=$AWS_DEFAULT_REGION key=$AWS_ACCESS_KEY_ID\n", 0o755)
	var logs syncBuffer
	err = inithooks.Run(context.Background(), inithooks.Options{
		Dir: dir, Endpoint: srv.URL(), Region: "us-east-1",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	out := logs.String()
	t.Log("\n" + out)
	if err == nil || err.Error() != "init scripts failed: 04-fails.sh: exit status 3" {
		t.Errorf("Run: %v", err)
	}
	if _, err := srv.SQS().Queue("from-hook"); err != nil {
		t.Error("the AWS CLI script made no queue")
	}
	if _, err := srv.SNS().TopicAttributes("arn:aws:sns:us-east-1:000000000000:from-awslocal"); err != nil {
		t.Error("the awslocal script made no topic")
	}
	for _, want := range []string{
		`msg=` + srv.URL() + `/000000000000/from-hook script=01-queue.sh stream=stdout`,
		`msg=arn:aws:sns:us-east-1:000000000000:from-awslocal script=02-awslocal.sh stream=stdout`,
		`level=WARN msg="init script skipped: not executable (chmod +x it)" script=03-readme.txt`,
		`msg="about to fail" script=04-fails.sh stream=stderr`,
		`level=ERROR msg="init script failed" script=04-fails.sh exit_status=3`,
		`msg="region=us-east-1 default=us-east-1 key=test" script=05-after.sh stream=stdout`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s", want)
		}
	}
}

// TestStrict stops at the first failure; a script with Windows line
// endings fails with a hint saying so.
func TestStrict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "01-crlf.sh", "#!/bin/sh\r\necho hi\r\n", 0o755)
	write(t, dir, "02-never.sh", "#!/bin/sh\necho ran\n", 0o755)
	var logs syncBuffer
	err := inithooks.Run(context.Background(), inithooks.Options{
		Dir: dir, Endpoint: "http://127.0.0.1:1", Region: "us-east-1", Strict: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err == nil || !strings.Contains(err.Error(), "01-crlf.sh:") || !strings.Contains(err.Error(), "Windows line endings") {
		t.Errorf("Run: %v", err)
	}
	if strings.Contains(logs.String(), "02-never.sh") {
		t.Errorf("a script ran after a strict failure:\n%s", logs.String())
	}
	if err := inithooks.Run(context.Background(), inithooks.Options{Dir: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing directory is no error")
	}
}
