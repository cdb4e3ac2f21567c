// Command fanout serves an in-memory emulator of Amazon SNS and SQS on one
// HTTP endpoint, 127.0.0.1:4566 by default.
//
//	fanout [serve] [flags]   serve SQS and SNS (the default command)
//	fanout filter [flags]    try a filter policy on a message, offline
//	fanout export            write a running fanout's topology (topology.go)
//	fanout apply FILE        apply a topology file to a running fanout
//	fanout import goaws FILE convert a goaws config into a topology file
//	fanout version           print the version
//	fanout help [command]    print help
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/admin"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses of fanout itself (fanout filter has its own).
const (
	exitOK    = 0
	exitError = 1 // fanout could not run, e.g. the port is taken
	exitUsage = 2 // a bad command line or FANOUT_* variable
)

const usage = `fanout: an in-memory emulator of Amazon SNS and SQS.

Usage:
  fanout [serve] [flags]   serve SQS and SNS on one endpoint (the default command)
  fanout filter [flags]    try an SNS filter policy on a message, offline
  fanout export            write a running fanout's topology as a file
  fanout apply FILE        apply a topology file to a running fanout
  fanout import goaws FILE convert a goaws config into a topology file
  fanout version           print fanout's version
  fanout help [command]    print this help, or a command's flags

Every serve flag can also be set by a FANOUT_* variable (--log-level is
FANOUT_LOG_LEVEL); a flag on the command line wins.

Endpoints beyond AWS's, under /_fanout/ (GET /_fanout/api lists them all):
  GET  /_fanout/                             the dashboard (open it in a browser)
  GET  /_fanout/health                       status, version, uptime
  GET  /_fanout/clock                        fanout's time and offset
  POST /_fanout/clock {"advance":"15m"}      move time forward; runs what falls due
  GET  /_fanout/sqs/queues                   every queue with its counts
  GET  /_fanout/sqs/queues/NAME/messages     peek at a queue's messages, changing nothing
  GET  /_fanout/deliveries                   SNS deliveries and their attempts
  GET  /_fanout/sns/deliveries               delivery counts and recent failures
  GET  /_fanout/sns/pending                  subscriptions waiting for confirmation
  GET  /_fanout/sns/outbox                   what email, sms and push endpoints received
  POST /_fanout/reset                        back to new (also moto's POST /moto-api/reset)
  GET  /_fanout/topology                     the queues, topics and subscriptions, as a topology file
  POST /_fanout/topology                     apply a topology file (?prune=true, ?dryRun=true)
  GET  /_fanout/topology/schema.json         the topology file's JSON Schema
  GET  /_fanout/playground                   the filter policy playground
  POST /_fanout/filter/test                  test a filter policy (JSON)
  /_fanout/debug/pprof/                      Go's profiler, with --pprof

Run 'fanout help serve' for the serve flags.
`

// cli runs fanout with args (without the program name) and returns the exit status.
func cli(args []string, stdout, stderr io.Writer) int {
	cmd, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, rest = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		err := serve(rest, os.LookupEnv, stderr)
		switch {
		case errors.Is(err, flag.ErrHelp):
			if len(args) == 0 || args[0] != "serve" { // fanout --help: the overview
				fmt.Fprint(stdout, usage)
				return exitOK
			}
			printServeHelp(stdout)
			return exitOK
		case errors.Is(err, errVersion):
			printVersion(stdout)
			return exitOK
		case errors.As(err, new(usageError)):
			fmt.Fprintf(stderr, "fanout serve: %v (run 'fanout help serve')\n", err)
			return exitUsage
		case err != nil:
			fmt.Fprintln(stderr, "fanout:", err)
			return exitError
		}
		return exitOK
	case "filter":
		return runFilter(rest, stdout, stderr)
	case "export":
		return runExport(rest, stdout, stderr)
	case "apply":
		return runApply(rest, stdout, stderr)
	case "import":
		return runImport(rest, stdout, stderr)
	case "version":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "fanout version: unexpected argument %q\n", rest[0])
			return exitUsage
		}
		printVersion(stdout)
		return exitOK
	case "help":
		switch {
		case len(rest) == 0:
			fmt.Fprint(stdout, usage)
		case rest[0] == "serve" && len(rest) == 1:
			printServeHelp(stdout)
		case rest[0] == "filter" && len(rest) == 1:
			return runFilter([]string{"-h"}, stdout, stdout)
		case rest[0] == "version" && len(rest) == 1:
			fmt.Fprintln(stdout, "usage: fanout version (also fanout --version)")
		default:
			fmt.Fprintf(stderr, "fanout help: unknown command %q (commands: serve, filter, export, apply, import, version, help)\n", strings.Join(rest, " "))
			return exitUsage
		}
		return exitOK
	default:
		fmt.Fprintf(stderr, "fanout: unknown command %q (commands: serve, filter, export, apply, import, version, help; run 'fanout help')\n", cmd)
		return exitUsage
	}
}

// errVersion is what serve returns for --version.
var errVersion = errors.New("version requested")

// usageError is a bad flag, argument or FANOUT_* variable.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func printVersion(w io.Writer) {
	v := admin.Version
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version // go install …@v1.2.3 stamps the module version
	}
	fmt.Fprintf(w, "fanout %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func printServeHelp(w io.Writer) {
	fs, _ := serveFlags()
	fs.SetOutput(w)
	fmt.Fprint(w, "usage: fanout [serve] [flags]\n\nServes SQS and SNS on one endpoint until SIGINT or SIGTERM.\n\nFlags (each also a FANOUT_* variable, e.g. FANOUT_ADDR for --addr):\n")
	fs.PrintDefaults()
}

// serveConfig is what the serve flags set.
type serveConfig struct {
	addr, region, account, level, clockMode string
	logFormat                               string
	noRecreate, noPurge, pprof, enforce     bool
	compat, urlStyle                        string
	lambdas                                 lambdaFlag
	smtp                                    string
	insecure                                bool
	dur                                     durabilityConfig // durability.go: --data-dir and its mode
	timeout                                 time.Duration
	version                                 bool
	memLimit                                memoryLimit    // memory.go: --memory-limit
	door                                    doorConfig     // door.go: the front door's flags
	topo                                    topologyConfig // topology.go: --config, --init-dir
	deliv                                   deliveryConfig // delivery_flags.go: delivery bounds and egress
}

// serveFlags declares the serve flags. Their FANOUT_* variables are applied
// by applyEnv through each flag's own parser, so a variable that does not
// parse is an error like a bad flag; add a flag here and it has its variable.
func serveFlags() (*flag.FlagSet, *serveConfig) {
	c := &serveConfig{lambdas: lambdaFlag{}}
	fs := flag.NewFlagSet("fanout serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by cli
	fs.Usage = func() {}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:4566", "listen address (127.0.0.1:0 picks a free port)")
	fs.StringVar(&c.region, "region", "us-east-1", "AWS region to emulate, e.g. eu-west-1")
	fs.StringVar(&c.account, "account", "000000000000", "AWS account id to emulate (12 digits)")
	fs.StringVar(&c.level, "log-level", "info", "debug (also every AWS call), info (AWS calls that failed), warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json")
	fs.BoolVar(&c.noRecreate, "no-recreate-wait", false, "allow re-creating a queue within 60 s of deleting it")
	fs.StringVar(&c.clockMode, "clock", "real", "real (the wall clock, which POST /_fanout/clock can move forward) or manual (moves only when told)")
	fs.BoolVar(&c.noPurge, "no-purge-wait", false, "allow more than one PurgeQueue per queue every 60 s")
	fs.StringVar(&c.compat, "compat", "", "localstack: a migration aid that turns off the guard rails LocalStack lacks (as --no-recreate-wait --no-purge-wait)")
	fs.StringVar(&c.urlStyle, "queue-url-style", "", "shape of returned queue URLs: standard, domain or path (LocalStack's SQS_ENDPOINT_STRATEGY); default the Host header called")
	fs.BoolVar(&c.pprof, "pprof", false, "serve net/http/pprof under /_fanout/debug/pprof/")
	fs.BoolVar(&c.enforce, "enforce-policies", false, "SNS delivers to an SQS queue only if the queue's Policy allows it, as AWS does")
	fs.Var(c.lambdas, "lambda", "NAME=URL: deliver SNS lambda subscriptions of function NAME to the Lambda Invoke API at URL; repeatable (FANOUT_LAMBDA=name=url,name2=url2)")
	fs.StringVar(&c.smtp, "smtp", "", "HOST:PORT of an SMTP server that email subscriptions are sent to")
	fs.BoolVar(&c.insecure, "insecure-endpoints", false, "accept self-signed certificates from https subscriptions")
	fs.DurationVar(&c.timeout, "endpoint-timeout", 15*time.Second, "how long an HTTP/S, Lambda or SMTP endpoint has to answer")
	fs.BoolVar(&c.version, "version", false, "print fanout's version and exit")
	fs.Var(&c.memLimit, "memory-limit", "Go's soft memory limit, as GOMEMLIMIT (e.g. 4GiB, or off): sends answer RequestThrottled once live memory passes 3/4 of it (default GOMEMLIMIT, else half the machine's or cgroup's memory)")
	c.door.flags(fs)
	c.topo.flags(fs)
	c.deliv.flags(fs)
	c.dur.flags(fs)
	return fs, c
}

// envName is the FANOUT_* variable of a flag.
func envName(flagName string) string {
	return "FANOUT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// applyEnv sets each flag whose FANOUT_* variable is set, before the command
// line is parsed (so the command line wins).
func applyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := lookup(envName(f.Name))
		if !ok || v == "" || err != nil || f.Name == "version" { // empty counts as unset
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = usagef("%s=%q: %s", envName(f.Name), v, badValue(f, e))
		}
	})
	return err
}

// badValue words a value a flag rejected, with an example of a good one.
func badValue(f *flag.Flag, err error) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "not a boolean (use true or false)"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, ok := g.Get().(time.Duration); ok {
			return "not a duration (use e.g. 5s or 1m30s)"
		}
	}
	return err.Error()
}

var (
	accountRE = regexp.MustCompile(`^[0-9]{12}$`)
	// AWS's region shape: us-east-1, eu-central-2, us-gov-west-1, cn-north-1.
	regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
)

// serve runs the server until a signal. lookup reads FANOUT_* variables.
func serve(args []string, lookup func(string) (string, bool), stderr io.Writer) error {
	fs, c := serveFlags()
	if err := applyEnv(fs, lookup); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if c.version {
		return errVersion
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags take the form --name value)", fs.Arg(0))
	}
	if !regionRE.MatchString(c.region) {
		return usagef("--region %q is not an AWS region name (e.g. us-east-1, eu-west-1)", c.region)
	}
	if !accountRE.MatchString(c.account) {
		return usagef("--account %q is not a 12-digit AWS account id (e.g. 000000000000)", c.account)
	}
	switch c.compat {
	case "":
	case "localstack":
		c.noRecreate, c.noPurge = true, true
	default:
		return usagef("--compat %q: use localstack", c.compat)
	}
	switch c.urlStyle {
	case "", "standard", "domain", "path":
	default:
		return usagef("--queue-url-style %q: use standard, domain or path", c.urlStyle)
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(c.level)); err != nil {
		return usagef("--log-level %q: use debug, info, warn or error", c.level)
	}
	var clk clock.Clock
	switch c.clockMode {
	case "real":
		clk = clock.NewAdjustable()
	case "manual":
		clk = clock.NewManual(time.Now())
	default:
		return usagef("--clock %q: use real or manual", c.clockMode)
	}
	applyMemoryLimit(c.memLimit, lookup)
	var log *slog.Logger
	switch c.logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	case "json":
		log = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: lv}))
	default:
		return usagef("--log-format %q: use text or json", c.logFormat)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := fanout.Options{
		Addr: c.addr, Region: c.region, Account: c.account, Logger: log, Clock: clk,
		NoRecreateWait: c.noRecreate, NoPurgeWait: c.noPurge, Pprof: c.pprof,
		EnforcePolicies: c.enforce, QueueURLStyle: c.urlStyle,
		Lambda: c.lambdas, SMTP: c.smtp, InsecureEndpoints: c.insecure, EndpointTimeout: c.timeout,
	}
	if err := c.door.apply(&opts); err != nil {
		return err
	}
	if err := c.topo.apply(&opts); err != nil {
		return err
	}
	if err := c.deliv.apply(&opts); err != nil {
		return err
	}
	if err := c.dur.apply(fs, &opts); err != nil {
		return err
	}
	s, err := fanout.Start(ctx, opts)
	if err != nil {
		return topologyError(err)
	}
	s.WarmUp() // SNS's signing key, in the background
	log.Info("fanout listening", "endpoint", s.URL(), "region", c.region, "account", c.account)
	select {
	case <-ctx.Done():
	case err := <-c.topo.runHooks(ctx, s, c.region, log):
		_ = s.Close()
		return fmt.Errorf("--init-strict: %w", err)
	}
	log.Info("fanout shutting down")
	return s.Close()
}
