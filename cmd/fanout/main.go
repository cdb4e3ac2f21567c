// Command fanout serves an in-memory emulator of Amazon SNS and SQS on one
// HTTP endpoint, 127.0.0.1:4566 by default.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "filter" {
		os.Exit(runFilter(os.Args[2:], os.Stdout, os.Stderr))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(2)
	}
}

// env returns the FANOUT_* variable for a flag, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("FANOUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

func envBool(name string) bool {
	b, _ := strconv.ParseBool(env(name, "false"))
	return b
}

// gcPercent is fanout's default GOGC. Queued messages are most of a busy
// emulator's heap, and the resident size peaks near live heap × (1 + GOGC/100):
// at 40, a million queued 1 KiB messages stay under 1.5 GiB. Small heaps,
// the usual case in tests, pay nothing measurable for the extra collections.
// GOGC in the environment overrides it.
const gcPercent = 40

func run(args []string) error {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	addr := fs.String("addr", env("addr", "127.0.0.1:4566"), "listen address (FANOUT_ADDR)")
	region := fs.String("region", env("region", "us-east-1"), "AWS region to emulate (FANOUT_REGION)")
	account := fs.String("account", env("account", "000000000000"), "AWS account id to emulate (FANOUT_ACCOUNT)")
	level := fs.String("log-level", env("log-level", "info"), "debug, info, warn or error (FANOUT_LOG_LEVEL)")
	noRecreate := fs.Bool("no-recreate-wait", envBool("no-recreate-wait"), "allow re-creating a queue within 60 s of deleting it (FANOUT_NO_RECREATE_WAIT)")
	clockMode := fs.String("clock", env("clock", "real"), "real (the wall clock, which POST /_fanout/clock can move forward) or manual (moves only when told) (FANOUT_CLOCK)")
	noPurge := fs.Bool("no-purge-wait", envBool("no-purge-wait"), "allow more than one PurgeQueue per queue every 60 s (FANOUT_NO_PURGE_WAIT)")
	pprofOn := fs.Bool("pprof", envBool("pprof"), "serve net/http/pprof under /_fanout/debug/pprof/ (FANOUT_PPROF)")
	enforce := fs.Bool("enforce-policies", envBool("enforce-policies"), "SNS delivers to an SQS queue only if the queue's Policy allows it, as AWS does (FANOUT_ENFORCE_POLICIES)")
	lambdas := lambdaFlag{}
	if err := lambdas.addList(env("lambda", "")); err != nil {
		return fmt.Errorf("FANOUT_LAMBDA: %w", err)
	}
	fs.Var(lambdas, "lambda", "NAME=URL: deliver SNS lambda subscriptions of function NAME to the Lambda Invoke API at URL; repeatable (FANOUT_LAMBDA=name=url,name2=url2)")
	smtpAddr := fs.String("smtp", env("smtp", ""), "HOST:PORT of an SMTP server that email subscriptions are sent to (FANOUT_SMTP)")
	insecure := fs.Bool("insecure-endpoints", envBool("insecure-endpoints"), "accept self-signed certificates from https subscriptions (FANOUT_INSECURE_ENDPOINTS)")
	timeout := fs.Duration("endpoint-timeout", envDuration("endpoint-timeout", 15*time.Second), "how long an HTTP/S, Lambda or SMTP endpoint has to answer (FANOUT_ENDPOINT_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	var clk clock.Clock
	switch *clockMode {
	case "real":
		clk = clock.NewAdjustable()
	case "manual":
		clk = clock.NewManual(time.Now())
	default:
		return fmt.Errorf("--clock: %q is neither real nor manual", *clockMode)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := fanout.Start(ctx, fanout.Options{
		Addr: *addr, Region: *region, Account: *account, Logger: log, Clock: clk,
		NoRecreateWait: *noRecreate, NoPurgeWait: *noPurge, Pprof: *pprofOn,
		EnforcePolicies: *enforce,
		Lambda:          lambdas, SMTP: *smtpAddr, InsecureEndpoints: *insecure, EndpointTimeout: *timeout,
	})
	if err != nil {
		return err
	}
	s.WarmUp() // SNS's signing key, in the background
	log.Info("fanout listening", "endpoint", s.URL(), "region", *region, "account", *account)
	<-ctx.Done()
	log.Info("fanout shutting down")
	return s.Close()
}
