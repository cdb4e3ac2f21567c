// Package inithooks runs the scripts of an init directory once fanout
// serves, for what a topology file cannot say: each executable file, in
// name order, with the AWS environment variables pointing at fanout, its
// output logged line by line under its name.
package inithooks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Options say what to run and against which fanout.
type Options struct {
	Dir      string
	Endpoint string // fanout's URL, e.g. http://127.0.0.1:4566
	Region   string
	// Strict stops at the first failing script.
	Strict bool
	Logger *slog.Logger
}

// awslocal is LocalStack's wrapper of the AWS CLI, as a shell script:
// scripts written for LocalStack's ready.d call it.
const awslocal = "#!/bin/sh\nexec aws --endpoint-url \"$AWS_ENDPOINT_URL\" \"$@\"\n"

// Run runs the scripts. It returns an error naming each script that failed
// (with Strict, the first), after logging it with its exit status.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		return fmt.Errorf("init directory: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	shim, err := os.MkdirTemp("", "fanout-init-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(shim)
	if err := os.WriteFile(filepath.Join(shim, "awslocal"), []byte(awslocal), 0o755); err != nil {
		return err
	}
	env := append(os.Environ(),
		"AWS_ENDPOINT_URL="+o.Endpoint,
		"AWS_REGION="+o.Region,
		"AWS_DEFAULT_REGION="+o.Region,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"FANOUT_ENDPOINT="+o.Endpoint,
		"PATH="+shim+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	var failed []string
	for _, e := range entries {
		path := filepath.Join(o.Dir, e.Name())
		info, err := os.Stat(path) // follows symbolic links
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if info.Mode().Perm()&0o111 == 0 {
			log.Warn("init script skipped: not executable (chmod +x it)", "script", e.Name())
			continue
		}
		if err := run(ctx, path, e.Name(), env, log); err != nil {
			failed = append(failed, e.Name()+": "+err.Error())
			if o.Strict || ctx.Err() != nil {
				break
			}
		}
	}
	if len(failed) > 0 {
		return errors.New("init scripts failed: " + strings.Join(failed, "; "))
	}
	return nil
}

func run(ctx context.Context, path, name string, env []string, log *slog.Logger) error {
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = env
	cmd.Dir = filepath.Dir(path)
	var wg sync.WaitGroup
	stdout, stderr := lines(&wg, log, name, "stdout"), lines(&wg, log, name, "stderr")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	log.Info("init script started", "script", name)
	err := cmd.Run()
	stdout.Close()
	stderr.Close()
	wg.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		log.Error("init script failed", "script", name, "exit_status", exit.ExitCode())
		return fmt.Errorf("exit status %d", exit.ExitCode())
	case err != nil:
		msg := err.Error()
		if crlf(path) {
			msg += " (its first line ends in CR: the file has Windows line endings; convert it with dos2unix)"
		}
		log.Error("init script failed to start", "script", name, "error", msg)
		return errors.New(msg)
	}
	log.Info("init script done", "script", name)
	return nil
}

// lines logs what is written to it, one record per line.
func lines(wg *sync.WaitGroup, log *slog.Logger, name, stream string) io.WriteCloser {
	r, w := io.Pipe()
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			log.Info(sc.Text(), "script", name, "stream", stream)
		}
		_, _ = io.Copy(io.Discard, r) // a line too long for the scanner
	}()
	return w
}

// crlf reports whether a script's first line ends in a carriage return,
// which makes its interpreter "sh\r": not found.
func crlf(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return bytes.HasSuffix(line, []byte("\r"))
}
