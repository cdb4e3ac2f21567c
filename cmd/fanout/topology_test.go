package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/topology"
)

func runCLI(args ...string) (int, string, string) {
	var out, errs strings.Builder
	code := cli(args, &out, &errs)
	return code, out.String(), errs.String()
}

// TestBadConfigStartsNothing: an invalid --config exits non-zero with every
// error, before anything listens.
func TestBadConfigStartsNothing(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(file, []byte("queues:\n  a: {attributes: {VisibilityTimeout: 99999}}\n  b: {redrive: {deadLetterQueue: nope, maxReceiveCount: 1}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("--addr", "127.0.0.1:0", "--config", file)
	if code != exitError {
		t.Errorf("exit status %d", code)
	}
	for _, want := range []string{
		"fanout: 2 problem(s) in the topology file; nothing was started:\n",
		file + ":2:20: queues.a.attributes.VisibilityTimeout: InvalidAttributeValue: Invalid value for the parameter VisibilityTimeout.\n",
		file + `:3:17: queues.b.redrive.deadLetterQueue: queue "nope" is not declared under queues`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "fanout listening") {
		t.Error("fanout listened")
	}
}

// TestInitStrict stops fanout when an init script fails.
func TestInitStrict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "10-fail.sh"), []byte("#!/bin/sh\necho no >&2\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("--addr", "127.0.0.1:0", "--init-dir", dir, "--init-strict")
	if code != exitError || !strings.Contains(stderr, "fanout: --init-strict: init scripts failed: 10-fail.sh: exit status 7") ||
		!strings.Contains(stderr, `msg="init script failed" script=10-fail.sh exit_status=7`) {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	if code, _, stderr := runCLI("--init-dir", filepath.Join(dir, "missing")); code != exitUsage || !strings.Contains(stderr, "is not a directory") {
		t.Errorf("a missing --init-dir: %d %s", code, stderr)
	}
}

// TestExportApplyImport drives the export, apply and import commands
// against a fanout in-process.
func TestExportApplyImport(t *testing.T) {
	t.Parallel()
	srv, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	goawsFile := filepath.Join(dir, "goaws.yaml")
	if err := os.WriteFile(goawsFile, []byte("Local:\n  Queues:\n    - Name: jobs\n  Topics:\n    - Name: events\n      Subscriptions:\n        - QueueName: jobs\n          Raw: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, converted, stderr := runCLI("import", "goaws", goawsFile)
	if code != exitOK || converted != "queues:\n  jobs: {}\ntopics:\n  events:\n    subscriptions:\n      - queue: jobs\n        raw: true\n" {
		t.Fatalf("import: %d\n%s\n%s", code, converted, stderr)
	}
	file := filepath.Join(dir, "topology.yaml")
	if err := os.WriteFile(file, []byte(converted), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("apply", "--endpoint", srv.URL(), file)
	if code != exitOK || !strings.Contains(out, `"action": "subscribe"`) {
		t.Fatalf("apply: %d %s %s", code, out, stderr)
	}
	code, out, _ = runCLI("apply", "--endpoint", srv.URL(), file)
	if code != exitOK || !strings.Contains(out, `"changes": []`) {
		t.Errorf("apply again: %d %s", code, out)
	}
	code, out, stderr = runCLI("export", "--endpoint", srv.URL())
	if code != exitOK || out != converted {
		t.Errorf("export: %d\n%s\nwant\n%s%s", code, out, converted, stderr)
	}
	if _, err := topology.Parse([]byte(out), "export"); err != nil {
		t.Error(err)
	}
	if code, _, stderr = runCLI("export", "--endpoint", "http://127.0.0.1:1"); code != exitError || !strings.Contains(stderr, "fanout export: ") {
		t.Errorf("export from nowhere: %d %s", code, stderr)
	}
	if err := os.WriteFile(file, []byte("queues: {a: {attributes: {DelaySeconds: 901}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI("apply", "--endpoint", srv.URL(), file)
	if code != exitError || !strings.Contains(stderr, "fanout apply: 1 problem(s) in the file; nothing was changed:\n"+file+":1:27: queues.a.attributes.DelaySeconds: InvalidAttributeValue") {
		t.Errorf("apply of a bad file: %d %s", code, stderr)
	}
	if code, _, _ = runCLI("import", "elasticmq", file); code != exitUsage {
		t.Errorf("import of another kind: %d", code)
	}
}

// TestConfigFromEnvironment: FANOUT_CONFIG is --config.
func TestConfigFromEnvironment(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(file, []byte("queues: {a: {tagz: {}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) {
		if name == "FANOUT_CONFIG" {
			return file, true
		}
		return "", false
	}
	var stderr strings.Builder
	err := serve([]string{"--addr", "127.0.0.1:0"}, lookup, &stderr)
	if err == nil || !strings.Contains(err.Error(), file+`:1:14: queues.a.tagz: unknown key "tagz" (did you mean "tags"?)`) {
		t.Errorf("serve: %v", err)
	}
}

// TestExportApplyNamespaces: fanout export writes every namespace (and
// --account one account's, as a section); fanout apply of that file on
// another fanout makes the same namespaces.
func TestExportApplyNamespaces(t *testing.T) {
	t.Parallel()
	file, err := topology.ReadFile("../../topology/testdata/namespaces.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := fanout.Start(context.Background(), fanout.Options{Topology: file})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	code, all, stderr := runCLI("export", "--endpoint", a.URL())
	if code != exitOK || !strings.Contains(all, "namespaces:\n  - account: \"111111111111\"\n    region: eu-west-1\n") {
		t.Fatalf("export: %d\n%s%s", code, all, stderr)
	}
	code, one, stderr := runCLI("export", "--endpoint", a.URL(), "--account", "222222222222")
	if code != exitOK || one != "namespaces:\n  - account: \"222222222222\"\n    region: us-east-1\n    queues:\n      orders: {}\n" {
		t.Fatalf("export --account: %d\n%s%s", code, one, stderr)
	}
	b, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	path := filepath.Join(t.TempDir(), "all.yaml")
	if err := os.WriteFile(path, []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI("apply", "--endpoint", b.URL(), path); code != exitOK || !strings.Contains(out, `"account": "222222222222"`) {
		t.Fatalf("apply: %d %s %s", code, out, stderr)
	}
	if code, again, _ := runCLI("export", "--endpoint", b.URL()); code != exitOK || again != all {
		t.Fatalf("export after apply:\n%s\nwant\n%s", again, all)
	}
}
