package topology_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/topology"
)

// billionLaughs doubles at each of 30 levels: 2^30 values once expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol]\n")
	for i := 1; i <= 30; i++ {
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [*a" + strconv.Itoa(i-1) + ", *a" + strconv.Itoa(i-1) + "]\n")
	}
	b.WriteString("queues: {q: {tags: {x: *a30}}}\n")
	return b.String()
}

// TestBadFiles: each broken file is refused with every error, each with its
// line, column and key path, and fanout starts nothing.
func TestBadFiles(t *testing.T) {
	t.Parallel()
	big := "queues:\n" + strings.Repeat("  q-padding-padding-padding-padding: {}\n", 10<<20/40)
	cases := []struct {
		name, file string
		want       []string
	}{
		{"syntax error", "queues:\n  a: {x: 1\n  b: {}\n",
			[]string{"bad.yaml:3:3: YAML syntax: ',' or '}' must be specified"}},
		{"duplicate key", "queues:\n  a: {}\n  a: {}\n",
			[]string{`bad.yaml:3:3: key "a" is already set at line 2, column 3`}},
		{"unknown keys", "queues:\n  a:\n    atributes: {}\n    attributes: {VisibiltyTimeout: 5}\ntopic: {}\n",
			[]string{
				`bad.yaml:3:5: queues.a.atributes: unknown key "atributes" (did you mean "attributes"?)`,
				`bad.yaml:4:18: queues.a.attributes.VisibiltyTimeout: unknown attribute "VisibiltyTimeout" (did you mean "VisibilityTimeout"?)`,
				`bad.yaml:5:1: topic: unknown key "topic" (did you mean "topics"?)`,
			}},
		{"wrong types", "queues: [a]\ntopics:\n  t:\n    subscriptions:\n      - {queue: a, raw: yes please}\n      - sqs\n",
			[]string{
				"bad.yaml:1:9: queues: must be an object of names, not a list",
				"bad.yaml:5:25: topics.t.subscriptions[0].raw: must be true or false, not a string",
				"bad.yaml:6:9: topics.t.subscriptions[1]: must be an object, not a string",
			}},
		{"out of range", "queues:\n  a:\n    attributes: {VisibilityTimeout: 50000, DelaySeconds: -1}\n",
			[]string{
				"bad.yaml:3:18: queues.a.attributes.VisibilityTimeout: InvalidAttributeValue: Invalid value for the parameter VisibilityTimeout.",
				"bad.yaml:3:44: queues.a.attributes.DelaySeconds: InvalidAttributeValue: Invalid value for the parameter DelaySeconds.",
			}},
		{"FIFO pairing", "queues:\n  a.fifo: {}\n  b: {}\ntopics:\n  t:\n    subscriptions: [{queue: a.fifo}]\n  u.fifo:\n    subscriptions: [{queue: b}]\n",
			[]string{
				"bad.yaml:6:22: topics.t.subscriptions[0].queue: InvalidParameter: Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
			}},
		{"invalid filter policy", "queues: {a: {}}\ntopics:\n  t:\n    subscriptions:\n      - queue: a\n        filterPolicy: {price: [{numeric: [\">\", x]}]}\n",
			[]string{"bad.yaml:6:9: topics.t.subscriptions[0].filterPolicy: InvalidParameter: Invalid parameter: Attributes Reason: FilterPolicy: Value of > must be numeric"}},
		{"dangling references", "queues:\n  a: {redrive: {deadLetterQueue: a-dql, maxReceiveCount: 3}}\n  a-dlq: {}\ntopics:\n  t:\n    subscriptions: [{queue: b}]\n",
			[]string{
				`bad.yaml:2:17: queues.a.redrive.deadLetterQueue: queue "a-dql" is not declared under queues (did you mean "a-dlq"?); declare it, or give its ARN`,
				`bad.yaml:6:22: topics.t.subscriptions[0].queue: queue "b" is not declared under queues (did you mean "a"?); declare it, or give its ARN`,
			}},
		{"redrive cycle", "queues:\n  a: {redrive: {deadLetterQueue: b, maxReceiveCount: 3}}\n  b: {redrive: {deadLetterQueue: c, maxReceiveCount: 3}}\n  c: {redrive: {deadLetterQueue: a, maxReceiveCount: 3}}\n",
			[]string{"bad.yaml:4:7: queues.c.redrive: redrive cycle: a -> b -> c -> a; a dead-letter queue cannot lead back to its source"}},
		{"two endpoints", "topics:\n  t:\n    subscriptions: [{http: 'http://x', lambda: f}]\n",
			[]string{"bad.yaml:3:21: topics.t.subscriptions[0]: names http and lambda: a subscription has one endpoint"}},
		{"10 MB", big, []string{"bad.yaml: the file is 10485768 bytes; a topology file may have at most 4194304 (4 MiB)"}},
		{"billion laughs", billionLaughs(), []string{"the file expands to more than 1000000 values (YAML aliases repeat what they refer to); simplify it"}},
		{"unknown alias", "queues: {a: *nope}\n", []string{"bad.yaml:1:13: YAML alias *nope refers to no anchor &nope before it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "bad.yaml")
			if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			got := loadErrors(t, path, dir)
			for i, w := range c.want {
				w = strings.ReplaceAll(w, "bad.yaml", path)
				if i >= len(got) || !strings.Contains(got[i], w) {
					t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.ReplaceAll(strings.Join(c.want, "\n"), "bad.yaml", path))
					break
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("%d errors, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
		})
	}
}

// loadErrors loads a file the way fanout --config does and returns its
// errors, checking that no server came up.
func loadErrors(t *testing.T, path, dir string) []string {
	t.Helper()
	_, err := topology.Load(path, topology.Options{})
	var errs topology.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load: %v (%T), want Errors", err, err)
	}
	l, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	addr := l.Addr().String()
	l.Close()
	srv, serr := fanout.Start(context.Background(), fanout.Options{Addr: addr, ConfigFile: path})
	if serr == nil {
		srv.Close()
		t.Fatal("fanout started with a bad file")
	}
	if serr.Error() != err.Error() {
		t.Errorf("Start and Load disagree:\n%v\n%v", serr, err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("something listens after a failed start")
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestUnreadableFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := topology.ReadFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory, not a topology file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := topology.ReadFile(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("a missing file: %v", err)
	}
	locked := filepath.Join(dir, "locked.yaml")
	if err := os.WriteFile(locked, []byte("queues: {}\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(locked); err == nil {
		// Running as root, which reads anything: a file that fails on read instead.
		f.Close()
		locked = "/proc/self/mem"
	}
	if _, err := topology.ReadFile(locked); err == nil {
		t.Errorf("an unreadable file was read")
	} else {
		t.Log(err)
	}
}

// TestREADMEExample: the file the README's "Declare your architecture"
// starts from loads.
func TestREADMEExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n# topology.yaml\n")
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("README has no topology.yaml block")
	}
	top, err := topology.Parse([]byte(block), "README.md")
	if err == nil {
		err = topology.Validate(top, topology.Options{})
	}
	if err != nil {
		t.Error(err)
	}
}
