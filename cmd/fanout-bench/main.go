// Command fanout-bench is a load tool for fanout, the SNS/SQS emulator.
//
// It runs named scenarios (send, send-batch, fill, drain, fifo-send-receive,
// publish, publish-filtered, http-delivery, http-delivery-signed, and the
// scale scenarios below), each once
// per body size of --body-sizes (64 and 1024 bytes by default), with N
// concurrent clients for a fixed time against the fanout server, a null
// server that answers with canned responses and stores nothing, or both
// alternately, and reports calls/s, messages/s, p50/p99 latency, errors and
// the server's CPU time per call and per message.
//
// Examples, from the repository root:
//
//	go run ./cmd/fanout-bench                                  # quick set against fanout
//	go run ./cmd/fanout-bench --target both --client both      # fanout vs null, A B A B A B
//	go run ./cmd/fanout-bench --scenario publish --subs 1,3,10 --target null
//	go run ./cmd/fanout-bench --scenario drain --queued 1000000 --client http
//	go run ./cmd/fanout-bench --target http://127.0.0.1:4566 --json > out.json
//	go run ./cmd/fanout-bench --target fanout,null,hello --client http --scenario send-batch
//	# what storing alone costs: the null server keeping every body it is sent
//	go run ./cmd/fanout-bench --target fanout,null,null-store --client both --scenario send-batch
//	go run ./cmd/fanout-bench --scenario fill --client http --fill-duration 60s
//	# the same on a VM, with the memory the fill will take backed by the host first
//	go run ./cmd/fanout-bench --scenario fill --client http --fill-duration 100s --prefault 8
//
// Issue 7's measurements:
//
//	# 200 filtered subscriptions (3 match) vs 3 unfiltered: ratios printed at the end
//	go run ./cmd/fanout-bench --scenario publish-filtered --filtered 200 --client http --rounds 3
//	# HTTP delivery to a loopback sink: raw and signed, the sink failing none or half
//	go run ./cmd/fanout-bench --scenario http-delivery,http-delivery-signed --sink-fail 0,0.5 --client http
//	# the sink's delivery latency while 50 other subscriptions of the topic hang
//	go run ./cmd/fanout-bench --scenario http-delivery --hanging 50 --client http --duration 60s
//	# one client: p99 of fanout minus p99 of null
//	go run ./cmd/fanout-bench --clients 1 --scenario send --client sdk --target both
//	# RSS of a fresh fanout holding a million queued 1 KiB messages
//	go run ./cmd/fanout-bench --memory 1000000
//
// publish-filtered runs twice per target: publish-filtered/unfiltered (a
// topic with 3 plain SQS subscriptions) and publish-filtered/filtered=N (N
// subscriptions with 5-key filter policies of which 3 match); both publish
// the same messages with 5 attributes and deliver each to 3 queues, so the
// difference is the cost of evaluating the policies. The comparison lines
// give publish calls/s, server CPU per publish and their filtered/unfiltered
// ratios.
//
// http-delivery and http-delivery-signed run on fanout only (the null
// server delivers nothing). The tool runs an HTTP sink on loopback that
// confirms the subscription through its SubscribeURL and answers at once;
// publishers keep at most --window messages undelivered. The delivered row
// is the sink's receipts (msgs/s) and publish-to-delivery latency; the
// attempt row counts its requests, with the 500s of --sink-fail as errors,
// retried at once by the subscription's DeliveryPolicy (4 attempts at
// most); the notes give attempts per message and fanout's own counts.
//
// The scale scenarios (queues-many, topics-many, long-polls, accounts;
// scale.go, longpoll.go) compare a baseline side with a scaled side, each
// on a fresh fanout of its own started and set up once, alternating A B A B:
//
//	nice -n 10 go run ./cmd/fanout-bench --scenario queues-many,topics-many,accounts,long-polls --client both --rounds 3
//
// --soak D does no scenarios: it runs mixed SQS and SNS traffic for D with
// 64 clients and checks at-least-once delivery, FIFO order and one receive
// per FIFO group at a time, sampling the server's RSS and goroutines and
// counting 5xx (soak.go, soakcheck.go). For example:
//
//	nice -n 10 go run ./cmd/fanout-bench --soak 30m
//
// --memory N does no scenarios: it pre-fills N --size messages into one
// queue of a fresh fanout and prints VmRSS before and after, VmHWM, and the
// live heap after a GC, each per message. With --memory-subs K it publishes
// them instead to a topic with K raw-delivery SQS subscriptions, so that K
// queues hold each.
//
// Each run prints one row per operation: calls/s and messages/s over the
// timed phase, p50 and p99 latency of successful calls, and errors. On the
// scenario's primary operation it also prints the server's CPU time (utime +
// stime of the subprocess, for everything the run made it do, receivers
// included) per primary call and per primary message, and this tool's own CPU
// per call, since on a small machine the load generator competes with the
// server. Rows named e2e are latency samples from send or publish to receipt.
//
// Run "go run ./cmd/fanout-bench -h" for the flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config holds the parsed flags.
type config struct {
	scenarios   []string
	clientKinds []string
	targets     []string // in alternation order
	clients     int
	duration    time.Duration
	warmup      time.Duration
	size        int           // --size: the body of --memory, --soak and http-delivery
	sizes       []int         // --body-sizes: every scenario runs once per size
	fillFor     time.Duration // the fill scenario's timed phase
	fillWin     time.Duration // its window; 0 is 5 s (tests shorten it)
	prefault    int64         // --prefault: bytes to touch and free before each run (prefault.go)
	queued      int
	groups      []int
	subs        []int
	filtered    []int       // filter-policy subscription counts for publish-filtered
	sinkFail    []float64   // shares of sink requests answered 500, http-delivery
	window      int         // most published, unresolved messages in http-delivery
	hanging     int         // http-delivery: subscriptions whose endpoints never answer
	memory      int         // --memory: messages to pre-fill; 0 runs the scenarios
	memorySubs  int         // --memory-subs: publish them to a topic with this many raw subscriptions
	churn       int         // --churn: messages to pass through a queue on a data dir; 0 runs the scenarios
	soak        soakOptions // --soak: its duration; 0 runs the scenarios
	hello       bool        // internal: --serve-null runs the hello handler instead
	keep        bool        // internal: --serve-null keeps what is sent (nullstore.go)
	servePprof  string      // internal: with --serve-null, serve its CPU profile on this address
	// The scale scenarios' counts (scale.go, longpoll.go).
	queues, topics, accounts, emptyAccounts int
	polls, pollQueues, pollRate             int
	pollWait                                int // long-polls' WaitTimeSeconds; 0 is 20 (tests shorten it)
	rounds                                  int
	slices                                  int // --slices: timed slices a run, alternating targets
	fanoutBin                               string
	baseBin                                 string // fanout-base's
	cpuProfile                              string // --cpu-profile: a directory; "" takes none
	json                                    bool
}

func main() {
	var serveAddr string
	cfg, err := parseFlags(os.Args[1:], &serveAddr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout-bench:", err)
		os.Exit(2)
	}
	if serveAddr != "" {
		if cfg.keep {
			floor = &storeFloor{}
		}
		if err := serveNull(serveAddr, cfg.servePprof, cfg.sizes, cfg.hello); err != nil {
			fmt.Fprintln(os.Stderr, "fanout-bench: null server:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fanout-bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, serveAddr *string) (*config, error) {
	fs := flag.NewFlagSet("fanout-bench", flag.ContinueOnError)
	var (
		scen    = fs.String("scenario", "send,send-batch,drain", "comma list of scenarios (see below)")
		client  = fs.String("client", "sdk", "client kind: sdk (aws-sdk-go-v2), http (plain net/http, pre-built JSON) or both")
		tgt     = fs.String("target", "fanout", "fanout, null, both (fanout and null alternately), fanout-log (fanout logging every call: --log-level debug --log-format json, to /dev/null), fanout-info (fanout at the default --log-level info: failed calls only), fanout-base (the --base-bin build), null-store (the null server keeping what each send sends, in memory mapped as fanout maps its own: for send, send-batch and fill), fanout-strict and fanout-relaxed (fanout with a fresh --data-dir and that --durability; fanout-base-strict and fanout-base-relaxed the same of the --base-bin build), durable (fanout, fanout-strict and fanout-relaxed alternately), a comma list of these (alternately), or the URL of a running loopback server")
		clients = fs.Int("clients", 8, "concurrent clients")
		dur     = fs.Duration("duration", 5*time.Second, "timed phase of each run")
		warm    = fs.Duration("warmup", time.Second, "untimed warm-up before each timed phase")
		size    = fs.Int("size", 1024, "message body size in bytes for --memory and --soak; given without --body-sizes, also the only body size of the scenarios")
		bsizes  = fs.String("body-sizes", "64,1024", "comma list of message body sizes in bytes; every scenario runs once per size")
		fillFor = fs.Duration("fill-duration", time.Minute, "timed phase of the fill scenario (its windows are 5 s)")
		prefGiB = fs.Int("prefault", 0, "before each run's warm-up, touch this many GiB of memory in this tool and free it, so that a VM's host backs the memory the server takes next (see prefault.go; each run notes the server's kernel time either way)")
		queued  = fs.Int("queued", 100000, "backlog the drain scenario pre-fills and holds (it refills what it deletes)")
		groups  = fs.String("groups", "1000", "comma list of FIFO message-group counts for fifo-send-receive (e.g. 1,1000)")
		subs    = fs.String("subs", "3", "comma list of SQS subscription counts for publish (e.g. 1,3,10)")
		filt    = fs.String("filtered", "200", "comma list of filtered-subscription counts for publish-filtered (at most 200, the per-topic limit of AWS and fanout); each runs next to the unfiltered baseline")
		fail    = fs.String("sink-fail", "0", "comma list of shares of notification requests the http-delivery sink fails with 500 (e.g. 0,0.5)")
		window  = fs.Int("window", 256, "http-delivery: most messages published and not yet delivered (or given up)")
		hanging = fs.Int("hanging", 0, "http-delivery: this many more http subscriptions of the topic whose endpoints never answer (dead endpoints next to the sink)")
		memory  = fs.Int("memory", 0, "instead of scenarios: pre-fill this many --size messages into one queue of a fresh fanout and print its RSS (e.g. 1000000)")
		memSubs = fs.Int("memory-subs", 0, "--memory: publish the messages to a topic with this many raw-delivery SQS subscriptions instead of sending them to one queue (at most 100)")
		churn   = fs.Int("churn", 0, "instead of scenarios: send, receive and delete this many --size messages through one queue of a fresh fanout with a --data-dir (--target fanout-strict, the default, or fanout-relaxed) and report the data dir's size, then restart on it (e.g. 10000000)")
		soakD   = fs.Duration("soak", 0, "instead of scenarios: mixed SQS and SNS traffic for this long (e.g. 30m) with --clients (64 unless given), checking at-least-once, FIFO order and one receive per FIFO group; reports RSS, goroutines and 5xx over time")
		soakS   = fs.Duration("soak-sample", 0, "--soak: how often to sample RSS and goroutines (default a 30th of --soak, at least 1s)")
		soakDr  = fs.Duration("soak-drain", 2*time.Minute, "--soak: most time for consumers to drain after the traffic")
		soakW   = fs.Int("soak-window", 2000, "--soak: producers pause while a queue holds this many messages not yet received")
		rounds  = fs.Int("rounds", 0, "rounds per scenario and target; results are medians (default 3 with --target both, else 1)")
		nSlices = fs.Int("slices", defaultSlices, "with several targets, time each round's runs in this many slices each, alternating targets slice by slice (A B B A A B …) after all have been set up and warmed up, so that the machine's drifts weigh on every target alike (not fill or long-polls, nor with --cpu-profile; each slice at least 100ms, fewer slices by default if --duration is short; 1: each target's run whole, one after the other)")
		bin     = fs.String("fanout-bin", "", "fanout binary to launch (default: go build ./cmd/fanout)")
		baseBin = fs.String("base-bin", "", "the fanout binary of target fanout-base, run as target fanout is, to compare two builds in one run (e.g. --target fanout,null,fanout-base with main's build)")
		cpuProf = fs.String("cpu-profile", "", "a directory to save a CPU profile of the server's timed phase of each run in (fanouts and null servers this tool starts); compare two with go tool pprof -diff_base")
		asJSON  = fs.Bool("json", false, "print results as JSON on stdout (the text report moves to stderr)")
		nQueues = fs.Int("queues", 100000, "queues-many: queues to spread sends over (at most 1000000)")
		nTopics = fs.Int("topics", 10000, "topics-many: topics to spread publishes over, each with one SQS subscription (at most 100000)")
		nPolls  = fs.Int("polls", 10000, "long-polls: concurrent long polls, one connection each (at most 50000, and RLIMIT_NOFILE)")
		pollQs  = fs.Int("poll-queues", 1000, "long-polls: queues the polls wait on (at most --polls)")
		pollHz  = fs.Int("poll-rate", 500, "long-polls: sends per second, in all, to random queues (at most 10000)")
		nAccts  = fs.Int("accounts", 100, "accounts: accounts to spread traffic over (at most 10000)")
		nEmpty  = fs.Int("empty-accounts", 1000, "accounts: empty accounts whose memory is measured on a fanout of their own (0: none; at most 100000)")
	)
	fs.StringVar(serveAddr, "serve-null", "", "internal: run the null server on this address")
	hello := fs.Bool("serve-hello", false, "internal: with --serve-null, run the hello handler")
	keep := fs.Bool("serve-store", false, "internal: with --serve-null, keep what each send sends (the store floor, target null-store)")
	servePprof := fs.String("serve-pprof", "", "internal: with --serve-null, serve the null server's CPU profile on this address")
	fs.Usage = func() { usage(fs) }
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	clientsGiven, sizeGiven, sizesGiven, targetGiven, slicesGiven := false, false, false, false, false
	fs.Visit(func(f *flag.Flag) {
		slicesGiven = slicesGiven || f.Name == "slices"
		targetGiven = targetGiven || f.Name == "target"
		clientsGiven = clientsGiven || f.Name == "clients"
		sizeGiven = sizeGiven || f.Name == "size"
		sizesGiven = sizesGiven || f.Name == "body-sizes"
	})
	if *soakD > 0 && !clientsGiven {
		*clients = 64
	}
	cfg := &config{
		scenarios:  splitList(*scen),
		clients:    *clients,
		duration:   *dur,
		warmup:     *warm,
		size:       *size,
		fillFor:    *fillFor,
		prefault:   int64(*prefGiB) << 30,
		hello:      *hello,
		keep:       *keep,
		servePprof: *servePprof,
		queued:     *queued,
		rounds:     *rounds,
		slices:     *nSlices,
		window:     *window,
		hanging:    *hanging,
		memory:     *memory,
		memorySubs: *memSubs,
		churn:      *churn,
		fanoutBin:  *bin,
		baseBin:    *baseBin,
		cpuProfile: *cpuProf,
		queues:     *nQueues, topics: *nTopics, polls: *nPolls, pollQueues: *pollQs, pollRate: *pollHz,
		accounts: *nAccts, emptyAccounts: *nEmpty,
		json: *asJSON,
		soak: soakOptions{duration: *soakD, sample: *soakS, drain: *soakDr, clients: *clients,
			size: *size, window: *soakW},
	}
	if cfg.soak.sample <= 0 {
		cfg.soak.sample = max(cfg.soak.duration/30, time.Second)
	}
	for _, s := range cfg.scenarios {
		if findScenario(s) == nil {
			return nil, fmt.Errorf("unknown scenario %q", s)
		}
	}
	switch *client {
	case kindSDK, kindHTTP:
		cfg.clientKinds = []string{*client}
	case "both":
		cfg.clientKinds = []string{kindSDK, kindHTTP}
	default:
		return nil, fmt.Errorf("--client %q: want sdk, http or both", *client)
	}
	switch *tgt {
	case "both":
		cfg.targets = []string{"fanout", "null"}
	case "durable":
		cfg.targets = []string{"fanout", "fanout-strict", "fanout-relaxed"}
	default:
		cfg.targets = splitList(*tgt)
	}
	if cfg.churn > 0 && !targetGiven {
		cfg.targets = []string{"fanout-strict"}
	}
	if cfg.rounds <= 0 {
		cfg.rounds = 1
		if len(cfg.targets) > 1 || slices.ContainsFunc(cfg.scenarios, isScale) {
			cfg.rounds = 3
		}
	}
	var err error
	if sizeGiven && !sizesGiven {
		cfg.sizes = []int{*size}
	} else if cfg.sizes, err = intList("body-sizes", *bsizes); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(cfg.sizes, func(n int) bool { return n > 256*1024 }) {
		return nil, errors.New("--body-sizes: each must be 1..262144")
	}
	if cfg.groups, err = intList("groups", *groups); err != nil {
		return nil, err
	}
	if cfg.subs, err = intList("subs", *subs); err != nil {
		return nil, err
	}
	if cfg.filtered, err = intList("filtered", *filt); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(cfg.filtered, func(n int) bool { return n < filteredMatches }) {
		return nil, fmt.Errorf("--filtered: each count must be at least %d (the subscriptions that match)", filteredMatches)
	}
	if cfg.sinkFail, err = floatList("sink-fail", *fail); err != nil {
		return nil, err
	}
	if err := checkPrefault(*prefGiB); err != nil {
		return nil, err
	}
	switch {
	case cfg.clients < 1 || cfg.clients > 1024:
		return nil, errors.New("--clients must be 1..1024")
	case cfg.duration <= 0 || cfg.duration > time.Hour:
		return nil, errors.New("--duration must be in (0, 1h]")
	case cfg.fillFor < defaultFillWindow || cfg.fillFor > time.Hour:
		return nil, errors.New("--fill-duration must be in [5s, 1h]")
	case cfg.warmup < 0 || cfg.warmup > 10*time.Minute:
		return nil, errors.New("--warmup must be in [0, 10m]")
	case cfg.size < 1 || cfg.size > 256*1024:
		return nil, errors.New("--size must be 1..262144")
	case cfg.queued < 1 || cfg.queued > 100_000_000:
		return nil, errors.New("--queued must be 1..100000000")
	case cfg.rounds > 100:
		return nil, errors.New("--rounds must be at most 100")
	case cfg.slices < 1 || cfg.slices > 1000:
		return nil, errors.New("--slices must be 1..1000")
	case slicesGiven && cfg.duration/time.Duration(cfg.slices) < minSlice:
		return nil, fmt.Errorf("--slices %d makes slices of --duration %v shorter than %v", cfg.slices, cfg.duration, minSlice)
	case cfg.window < 1 || cfg.window > 1_000_000:
		return nil, errors.New("--window must be 1..1000000")
	case cfg.hanging < 0 || cfg.hanging > 1000:
		return nil, errors.New("--hanging must be 0..1000")
	case cfg.memory < 0 || cfg.memory > 100_000_000:
		return nil, errors.New("--memory must be 0..100000000")
	case cfg.memorySubs < 0 || cfg.memorySubs > 100:
		return nil, errors.New("--memory-subs must be 0..100")
	case slices.ContainsFunc(cfg.targets, isBase) && cfg.baseBin == "":
		return nil, errors.New("--target fanout-base needs --base-bin")
	case cfg.churn < 0 || cfg.churn > 1_000_000_000:
		return nil, errors.New("--churn must be 0..1000000000")
	case cfg.churn > 0 && !slices.Equal(cfg.targets, []string{"fanout-strict"}) && !slices.Equal(cfg.targets, []string{"fanout-relaxed"}):
		return nil, errors.New("--churn needs --target fanout-strict or fanout-relaxed: it starts a fanout on a data dir of its own")
	case cfg.memory > 0 && !slices.Equal(cfg.targets, []string{"fanout"}):
		return nil, errors.New("--memory needs --target fanout: it reads the RSS of a fanout it starts")
	case cfg.soak.duration < 0 || cfg.soak.duration > 24*time.Hour:
		return nil, errors.New("--soak must be in [0, 24h]")
	case cfg.soak.duration > 0 && (len(cfg.targets) != 1 || cfg.targets[0] == "null"):
		return nil, errors.New("--soak needs --target fanout or the URL of a running fanout")
	case cfg.soak.duration > 0 && cfg.clients < minSoakClients:
		return nil, fmt.Errorf("--soak needs --clients %d or more", minSoakClients)
	case cfg.soak.window < 1 || cfg.soak.drain <= 0:
		return nil, errors.New("--soak-window must be at least 1 and --soak-drain positive")
	case cfg.queues < 1 || cfg.queues > 1_000_000:
		return nil, errors.New("--queues must be 1..1000000")
	case cfg.topics < 1 || cfg.topics > 100_000:
		return nil, errors.New("--topics must be 1..100000")
	case cfg.polls < 1 || cfg.polls > 50_000 || cfg.pollQueues < 1 || cfg.pollQueues > cfg.polls:
		return nil, errors.New("--polls must be 1..50000 and --poll-queues 1..--polls")
	case cfg.pollRate < 1 || cfg.pollRate > 10_000:
		return nil, errors.New("--poll-rate must be 1..10000")
	case cfg.accounts < 1 || cfg.accounts > 10_000 || cfg.emptyAccounts < 0 || cfg.emptyAccounts > 100_000:
		return nil, errors.New("--accounts must be 1..10000 and --empty-accounts 0..100000")
	}
	return cfg, nil
}

func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintln(w, "usage: fanout-bench [flags]")
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "serve-null" || f.Name == "serve-pprof" {
			return
		}
		fmt.Fprintf(w, "  --%s", f.Name)
		if name, _ := flag.UnquoteUsage(f); name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n\t%s", f.Usage)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintln(w, "\nscenarios:")
	for _, s := range scenarios {
		fmt.Fprintf(w, "  %-21s %s\n", s.name, s.doc)
	}
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func intList(name, s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 100000 {
			return nil, fmt.Errorf("--%s: bad value %q", name, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--%s: empty list", name)
	}
	return out, nil
}

// floatList parses a comma list of shares in [0, 1).
func floatList(name, s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0 && v < 1) {
			return nil, fmt.Errorf("--%s: bad value %q (want 0 <= x < 1)", name, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--%s: empty list", name)
	}
	return out, nil
}

// variants expands the chosen scenarios over their parameter lists and
// the body sizes; a variant's name ends in its size, e.g. send-batch/64B.
func (cfg *config) variants() []variant {
	sizes := cfg.sizes
	if len(sizes) == 0 {
		sizes = []int{cfg.size}
	}
	var out []variant
	for _, v := range cfg.paramVariants() {
		for _, n := range sizes {
			sv := v
			sv.size = n
			sv.name = fmt.Sprintf("%s/%dB", v.name, n)
			out = append(out, sv)
		}
	}
	return out
}

// paramVariants expands the chosen scenarios over their parameter lists.
func (cfg *config) paramVariants() []variant {
	var out []variant
	for _, name := range cfg.scenarios {
		sc := findScenario(name)
		if sc.scale != nil {
			continue // runScale runs them, each on fanouts of its own
		}
		var params []int
		switch sc.param {
		case "groups":
			params = cfg.groups
		case "subs":
			params = cfg.subs
		case "filtered":
			// The unfiltered baseline first, then each filtered count.
			out = append(out, variant{name: sc.name + "/unfiltered", sc: sc, param: 0})
			for _, n := range cfg.filtered {
				out = append(out, variant{name: fmt.Sprintf("%s/filtered=%d", sc.name, n), sc: sc, param: n})
			}
			continue
		case "sink-fail":
			for _, f := range cfg.sinkFail {
				name := sc.name
				if f > 0 {
					name += "/fail=" + strconv.FormatFloat(f, 'g', -1, 64)
				}
				out = append(out, variant{name: name, sc: sc, fail: f})
			}
			continue
		default:
			out = append(out, variant{name: sc.name, sc: sc})
			continue
		}
		for _, p := range params {
			out = append(out, variant{name: fmt.Sprintf("%s/%s=%d", sc.name, sc.param, p), sc: sc, param: p})
		}
	}
	return out
}

// clientSet is the clients for one target: one per kind plus the helpers.
type clientSet struct {
	ctl  *sdkClient
	fill dataPlane
	dp   map[string]dataPlane
}

func run(ctx context.Context, cfg *config) error {
	report := io.Writer(os.Stdout)
	if cfg.json {
		report = os.Stderr
	}

	bin := cfg.fanoutBin
	if bin == "" && (slices.ContainsFunc(cfg.targets, func(t string) bool { return strings.HasPrefix(t, "fanout") }) || cfg.memory > 0 || cfg.churn > 0) {
		dir, err := os.MkdirTemp("", "fanout-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "building ./cmd/fanout ...")
		if bin, err = buildFanout(ctx, dir); err != nil {
			return err
		}
	}

	if cfg.memory > 0 {
		return runMemory(ctx, cfg, bin, report)
	}
	if cfg.churn > 0 {
		return runChurn(ctx, cfg, bin, report)
	}
	if cfg.soak.duration > 0 {
		return runSoakCommand(ctx, cfg, bin, report)
	}

	var targets []*target
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	clients := map[*target]*clientSet{}
	plain := cfg.variants()
	for _, name := range cfg.targets {
		if len(plain) == 0 {
			break // only scale scenarios, which start fanouts of their own
		}
		tb := bin
		if isBase(name) {
			tb = cfg.baseBin
		}
		t, err := startTarget(ctx, name, tb, cfg.sizes)
		if err != nil {
			return err
		}
		targets = append(targets, t)
		cs := &clientSet{dp: map[string]dataPlane{}}
		for _, kind := range cfg.clientKinds {
			if kind == kindSDK {
				cs.dp[kind] = newSDKClient(t.endpoint, newSDKHTTPClient(cfg.clients))
			} else {
				cs.dp[kind] = &rawClient{hc: newHTTPClient(cfg.clients), endpoint: t.endpoint}
			}
		}
		cs.ctl = newSDKClient(t.endpoint, newSDKHTTPClient(2))
		cs.fill = &rawClient{hc: newHTTPClient(cfg.clients), endpoint: t.endpoint}
		clients[t] = cs
		fmt.Fprintf(os.Stderr, "target %s at %s (pid %d)\n", t.name, t.endpoint, t.pid())
	}

	fmt.Fprintf(report, "%d clients, %v timed + %v warm-up per run, bodies of %v bytes, %d round(s)\n",
		cfg.clients, cfg.duration, cfg.warmup, cfg.sizes, cfg.rounds)
	if n := cfg.sliceCount(); n > 1 && len(cfg.targets) > 1 {
		fmt.Fprintf(report, "each round's timed runs in %d slices a target, alternating targets (A B B A …)\n", n)
	}
	if slices.Contains(cfg.scenarios, "fill") {
		fmt.Fprintf(report, "fill runs %v timed, in %v windows\n", cfg.fillFor, cfg.fillWindow())
	}
	printHeader(report)
	var results []*result
	runID := strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
	seq := 0
	for _, v := range plain {
		for _, kind := range cfg.clientKinds {
			for round := 1; round <= cfg.rounds; round++ {
				var envs []*env
				for _, t := range targets {
					if v.sc.fanoutOnly && isNull(t.name) {
						if round == 1 {
							fmt.Fprintf(report, "%-7s %-4s %-30s skipped: the null server does not deliver\n", t.name, kind, v.name)
						}
						continue
					}
					if !t.alive() {
						finish(cfg, report, results)
						return fmt.Errorf("%s server exited unexpectedly", t.name)
					}
					seq++
					cs := clients[t]
					envs = append(envs, &env{
						cfg:      cfg,
						tgt:      t,
						kind:     kind,
						dp:       cs.dp[kind],
						ctl:      cs.ctl,
						fill:     cs.fill,
						prefix:   fmt.Sprintf("fb-%s-%d-%s", runID, seq, queueSafe(v.name)),
						param:    v.param,
						size:     v.size,
						sinkFail: v.fail,
					})
				}
				rs, errs := runRound(ctx, cfg, v.sc, slices.Repeat([]variant{v}, len(envs)), envs)
				for i, res := range rs {
					if errs[i] != nil {
						if ctx.Err() == nil {
							fmt.Fprintf(report, "%s %s %s: %v\n", envs[i].tgt.name, kind, v.name, errs[i])
						}
						continue
					}
					res.Round = round
					results = append(results, res)
					printRun(report, res)
				}
				if ctx.Err() != nil {
					fmt.Fprintln(os.Stderr, "interrupted; results so far:")
					return finish(cfg, report, results)
				}
			}
		}
	}
	for _, name := range cfg.scenarios {
		sc := findScenario(name)
		if sc.scale == nil {
			continue
		}
		if !slices.Contains(cfg.targets, "fanout") {
			fmt.Fprintf(report, "%s skipped: it needs --target fanout (it starts fanouts of its own)\n", name)
			continue
		}
		res, err := runScale(ctx, cfg, bin, sc, runID, report)
		results = append(results, res...)
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "interrupted; results so far:")
			return finish(cfg, report, results)
		}
		if err != nil {
			fmt.Fprintf(report, "%s: %v\n", name, err)
		}
	}
	printFootprints(report, targets)
	return finish(cfg, report, results)
}

// slicesFor is how many slices a round of sc on n targets is timed in.
// The fill's windows follow one queue's depth over its own timed phase, and
// a CPU profile covers a whole timed phase, so neither is sliced.
func (cfg *config) slicesFor(sc *scenario, n int) int {
	if n < 2 || sc.whole || cfg.cpuProfile != "" {
		return 1
	}
	return cfg.sliceCount()
}

// sliceCount is --slices, fewer if --duration is short.
func (cfg *config) sliceCount() int {
	return max(1, min(cfg.slices, int(cfg.duration/minSlice)))
}

// Slices by default: in a round of 8 runs of 5 s, SendMessageBatch's
// fanout/null ratio ranged 0.68–1.12 with whole runs and 0.84–0.90 with 10
// slices, the machine having changed speed by half meanwhile. A slice
// shorter than minSlice would be mostly its start and end.
const (
	defaultSlices = 10
	minSlice      = 100 * time.Millisecond
)

// printFootprints says, at the end of a run, how much memory each fanout
// holds and has held, and how much disk its data dir uses: persistence must
// not keep messages twice.
func printFootprints(w io.Writer, targets []*target) {
	var base int64
	for _, t := range targets {
		if t.pid() == 0 || !strings.HasPrefix(t.name, "fanout") {
			continue
		}
		st, err := processStatus(t.pid(), "VmRSS", "VmHWM")
		if err != nil {
			continue
		}
		line := fmt.Sprintf("%-15s VmRSS %.1f MiB, VmHWM %.1f MiB", t.name, float64(st["VmRSS"])/1024, float64(st["VmHWM"])/1024)
		if t.name == "fanout" {
			base = st["VmHWM"]
		} else if base > 0 {
			line += fmt.Sprintf(" (%.2fx fanout's VmHWM)", float64(st["VmHWM"])/float64(base))
		}
		if t.dataDir != "" {
			line += fmt.Sprintf("; data dir %.1f MiB", float64(dirBytes(t.dataDir))/(1<<20))
		}
		fmt.Fprintln(w, line)
	}
}

// finish prints the summary (and JSON) for whatever runs completed.
func finish(cfg *config, report io.Writer, results []*result) error {
	sum := summarize(results, cfg.targets)
	if cfg.rounds > 1 || len(cfg.targets) > 1 {
		printSummary(report, sum, cfg.rounds)
		printLatencyDiffs(report, sum, results, cfg.clients)
	}
	costs := filterCosts(sum)
	printFilterCosts(report, costs)
	scale := scaleCosts(sum)
	printScaleCosts(report, scale)
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		out := jsonReport(cfg, results, sum, costs)
		out["scale_cost"] = scale
		return enc.Encode(out)
	}
	return nil
}

// queueSafe maps a variant name to characters valid in queue and topic names.
func queueSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, s)
}

// isBase reports whether target name runs the --base-bin build.
func isBase(name string) bool { return strings.HasPrefix(name, "fanout-base") }

// isNull reports whether name is one of the null server's targets, which
// answer SQS and SNS calls but deliver nothing.
func isNull(name string) bool { return name == "null" || name == "null-store" }
