package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/goaws"
	"github.com/fanout/fanout/internal/inithooks"
	"github.com/fanout/fanout/topology"
)

// topologyConfig is the serve flags of topology as code: a file to load and
// scripts to run once fanout serves.
type topologyConfig struct {
	config     string
	initDir    string
	initStrict bool
}

func (c *topologyConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "a topology file (YAML or JSON) of queues, topics and subscriptions to create at start; an invalid one starts nothing")
	fs.StringVar(&c.initDir, "init-dir", "", "run the executable files in this directory, in name order, once fanout serves (AWS_ENDPOINT_URL and credentials set; awslocal works)")
	fs.BoolVar(&c.initStrict, "init-strict", false, "stop fanout when an --init-dir script fails")
}

func (c *topologyConfig) apply(o *fanout.Options) error {
	o.ConfigFile = c.config
	if c.initDir != "" {
		if info, err := os.Stat(c.initDir); err != nil || !info.IsDir() {
			return usagef("--init-dir %q is not a directory", c.initDir)
		}
	}
	return nil
}

// topologyError words a bad --config file: every error, and that nothing started.
func topologyError(err error) error {
	var errs topology.Errors
	if errors.As(err, &errs) {
		return fmt.Errorf("%d problem(s) in the topology file; nothing was started:\n%w", len(errs), errs)
	}
	return err
}

// runHooks runs --init-dir in the background. The channel yields an error
// when --init-strict is set and a script failed; it never yields otherwise.
func (c *topologyConfig) runHooks(ctx context.Context, s *fanout.Server, region string, log *slog.Logger) <-chan error {
	out := make(chan error, 1)
	if c.initDir == "" {
		return out
	}
	go func() {
		err := inithooks.Run(ctx, inithooks.Options{Dir: c.initDir, Endpoint: s.URL(), Region: region, Strict: c.initStrict, Logger: log})
		if err != nil && c.initStrict && ctx.Err() == nil {
			out <- err
		}
	}()
	return out
}

// runExport is "fanout export": the running server's topology, as a file.
func runExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fanout export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", envOr("FANOUT_ENDPOINT", "http://127.0.0.1:4566"), "the fanout to export (FANOUT_ENDPOINT)")
	format := fs.String("format", "yaml", "yaml or json")
	account := fs.String("account", "", "export only this account's namespaces (default every account)")
	region := fs.String("region", "", "export only this region's namespaces (default every region)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fanout export [--endpoint URL] [--format yaml|json] [--account ID] [--region NAME] > topology.yaml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return flagStatus(err)
	}
	if fs.NArg() > 0 || (*format != "yaml" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	q := url.Values{"format": {*format}}
	if *account != "" {
		q.Set("account", *account)
	}
	if *region != "" {
		q.Set("region", *region)
	}
	body, status, err := call(http.MethodGet, strings.TrimRight(*endpoint, "/")+"/_fanout/topology?"+q.Encode(), "", nil)
	if err != nil || status != http.StatusOK {
		fmt.Fprintf(stderr, "fanout export: %s\n", failure(err, status, body))
		return exitError
	}
	_, _ = stdout.Write(body)
	return exitOK
}

// runApply is "fanout apply FILE": apply a file to a running server.
func runApply(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fanout apply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", envOr("FANOUT_ENDPOINT", "http://127.0.0.1:4566"), "the fanout to apply to (FANOUT_ENDPOINT)")
	prune := fs.Bool("prune", false, "also delete the queues, topics and subscriptions the file does not name")
	dry := fs.Bool("dry-run", false, "report what would change, changing nothing")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fanout apply [--endpoint URL] [--prune] [--dry-run] FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return flagStatus(err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "fanout apply: %v\n", err)
		return exitError
	}
	url := fmt.Sprintf("%s/_fanout/topology?prune=%t&dryRun=%t", strings.TrimRight(*endpoint, "/"), *prune, *dry)
	body, status, err := call(http.MethodPost, url, "application/yaml", data)
	var bad struct {
		Errors []struct {
			Text string `json:"text"`
		} `json:"errors"`
	}
	if err == nil && status == http.StatusBadRequest && json.Unmarshal(body, &bad) == nil && len(bad.Errors) > 0 {
		fmt.Fprintf(stderr, "fanout apply: %d problem(s) in the file; nothing was changed:\n", len(bad.Errors))
		for _, e := range bad.Errors {
			fmt.Fprintln(stderr, fs.Arg(0)+":"+e.Text)
		}
		return exitError
	}
	if err != nil || status != http.StatusOK {
		fmt.Fprintf(stderr, "fanout apply: %s\n", failure(err, status, body))
		return exitError
	}
	_, _ = stdout.Write(body)
	return exitOK
}

// runImport is "fanout import goaws FILE": another emulator's config in
// fanout's format, on stdout.
func runImport(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || len(args) > 3 || args[0] != "goaws" {
		fmt.Fprintln(stderr, "usage: fanout import goaws FILE [ENVIRONMENT] > topology.yaml\n\nConverts a goaws YAML config (its Queues, Topics and Subscriptions) of ENVIRONMENT\n(default Local, or the file's only one) into a fanout topology file.")
		return exitUsage
	}
	env := ""
	if len(args) == 3 {
		env = args[2]
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "fanout import: %v\n", err)
		return exitError
	}
	t, notes, err := goaws.Convert(data, env)
	if err != nil {
		fmt.Fprintf(stderr, "fanout import: %v\n", err)
		return exitError
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "fanout import: note: %s\n", n)
	}
	out, err := t.YAML()
	if err != nil {
		fmt.Fprintf(stderr, "fanout import: %v\n", err)
		return exitError
	}
	_, _ = stdout.Write(out)
	// goaws accepts what AWS does not (a 128-byte MaximumMessageSize):
	// the file is written, and what fanout will refuse is said.
	if err := topology.Validate(t, topology.Options{}); err != nil {
		fmt.Fprintf(stderr, "fanout import: the converted file will not load until these are fixed:\n%v\n", err)
		return exitError
	}
	return exitOK
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func flagStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

func call(method, url, contentType string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	return out, res.StatusCode, err
}

func failure(err error, status int, body []byte) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("HTTP %d: %s", status, bytes.TrimSpace(body))
}
