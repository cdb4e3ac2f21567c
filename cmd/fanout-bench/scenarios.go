package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scenario is one named workload. To add one, write a prepare function and
// list it in scenarios; prepare does the untimed setup (queues, pre-fill) and
// returns the step that workers repeat, timing each call with w.do.
type scenario struct {
	name    string
	doc     string
	primary string // op that calls/s, messages/s and server CPU per call refer to
	param   string // flag whose comma list expands into variants, or ""
	// guard is the op whose every call failing in the warm-up aborts the
	// run (a server lacking a feature); default primary.
	guard      string
	fanoutOnly bool // the null server cannot run it (it delivers nothing)
	// whole: timed in one phase, never sliced (--slices): fill's windows
	// follow one queue over time, and long-polls samples each phase's wakes.
	whole bool
	// scale, when set, makes this a scale scenario (scale.go): a baseline
	// side and a scaled side, each on a fanout of its own.
	scale   *scaleSpec
	prepare func(ctx context.Context, e *env) (*workload, error)
}

var scenarios = []*scenario{
	{
		name: "send", primary: "send", prepare: prepareSend,
		doc: "SendMessage of one body (each of --body-sizes) to a standard queue",
	},
	{
		name: "send-batch", primary: "send-batch", prepare: prepareSendBatch,
		doc: "SendMessageBatch of 10 bodies to a standard queue",
	},
	{
		name: "fill", primary: "send-batch", prepare: prepareFill, whole: true,
		doc: "SendMessageBatch of 10 bodies with no consumer for --fill-duration; notes give msgs/s per 5-second window, the queue depth and (fanout) the collector's share of fanout's CPU, and last window / first",
	},
	{
		name: "drain", primary: "delete", guard: "receive", prepare: prepareDrain,
		doc: "pre-fill --queued messages with batch sends, untimed; then time ReceiveMessage(10) + DeleteMessageBatch, each worker sending back (SendMessageBatch, raw HTTP, op refill) as many as it deleted, so the backlog stays at --queued; the primary op, delete, counts messages received and deleted; a note gives fanout's queue depth at the end",
	},
	{
		name: "fifo-send-receive", primary: "send", param: "groups", prepare: prepareFIFO,
		doc: "half the clients SendMessage to a FIFO queue spread over --groups groups, the rest long-poll ReceiveMessage + DeleteMessageBatch; e2e is send-to-receive latency",
	},
	{
		name: "publish", primary: "publish", param: "subs", prepare: preparePublish,
		doc: "SNS Publish to a topic with --subs raw-delivery SQS subscriptions; separate receivers drain one of the queues, each claiming the messages it asks for so that no two ask for the same, and sample e2e publish-to-receivable latency there",
	},
	{
		name: "publish-envelope", primary: "publish", param: "subs", prepare: preparePublishEnvelope,
		doc: "publish with --subs SQS subscriptions without RawMessageDelivery: each queue gets the signed JSON envelope",
	},
	{
		name: "publish-filtered", primary: "publish", param: "filtered", prepare: preparePublishFiltered,
		doc: "publish with 5 message attributes to a topic with --filtered SQS subscriptions, each with its own 5-key filter policy (exact, prefix, numeric range, anything-but, exists), of which 3 match; and, as the baseline, to a topic with 3 unfiltered subscriptions; prints the filtered/unfiltered ratios",
	},
	{
		name: "http-delivery", primary: "delivered", guard: "publish", param: "sink-fail", fanoutOnly: true,
		prepare: prepareHTTPDelivery(true),
		doc:     "fanout only: Publish to a topic whose one subscription is an http endpoint this tool runs on loopback (RawMessageDelivery, so unsigned), with at most --window messages undelivered; delivered is the sink's receipts and publish-to-delivery latency, attempt its requests; --sink-fail makes the sink answer that share with 500, retried at once (4 attempts at most)",
	},
	{
		name: "http-delivery-signed", primary: "delivered", guard: "publish", param: "sink-fail", fanoutOnly: true,
		prepare: prepareHTTPDelivery(false),
		doc:     "http-delivery with JSON envelopes, each signed (SignatureVersion 1)",
	},
	{
		name: "queues-many", primary: "send", prepare: prepareQueuesMany,
		scale: &scaleSpec{setup: setupQueuesMany, sides: func(cfg *config) [2]*scaleSide {
			return [2]*scaleSide{{name: "one", count: 1}, {name: "queues=" + strconv.Itoa(cfg.queues), count: cfg.queues}}
		}},
		doc: "scale, on fanouts of its own: SendMessage to one random queue of --queues (set-up reports their creation time and memory per empty queue) vs to one queue, alternately",
	},
	{
		name: "topics-many", primary: "publish", prepare: prepareTopicsMany,
		scale: &scaleSpec{setup: setupTopicsMany, sides: func(cfg *config) [2]*scaleSide {
			return [2]*scaleSide{{name: "one", count: 1}, {name: "topics=" + strconv.Itoa(cfg.topics), count: cfg.topics}}
		}},
		doc: "scale: Publish to one random topic of --topics, each with one raw SQS subscription to a queue of its own, vs to one such topic",
	},
	{
		name: "long-polls", primary: "send", prepare: prepareLongPolls, whole: true,
		scale: &scaleSpec{setup: setupLongPolls, httpOnly: true, sides: func(cfg *config) [2]*scaleSide {
			per := max(1, cfg.polls/cfg.pollQueues)
			return [2]*scaleSide{{name: "one", count: per}, {name: "polls=" + strconv.Itoa(cfg.polls), count: cfg.polls}}
		}},
		doc: "scale, plain HTTP: --polls ReceiveMessage long polls (WaitTimeSeconds 20) waiting on --poll-queues queues, SendMessage of stamped bodies to random queues at --poll-rate; wake is send-to-return latency; set-up reports memory per waiting poll and fanout's CPU while they wait; baseline: the same polls per queue on one queue",
	},
	{
		name: "accounts", primary: "send", prepare: prepareAccounts,
		scale: &scaleSpec{setup: setupAccounts, modes: []string{"send", "publish"}, sides: func(cfg *config) [2]*scaleSide {
			return [2]*scaleSide{{name: "one", count: 1}, {name: "accounts=" + strconv.Itoa(cfg.accounts), count: cfg.accounts}}
		}},
		doc: "scale: SendMessage and Publish signed with the 12-digit keys of --accounts accounts, each with a queue and a topic subscribed to it, traffic spread over them, vs the default account alone; set-up reports memory per empty account (--empty-accounts on a fanout of its own)",
	},
}

func findScenario(name string) *scenario {
	for _, s := range scenarios {
		if s.name == name {
			return s
		}
	}
	return nil
}

// variant is a scenario with its parameter fixed, e.g. publish/subs=3.
type variant struct {
	name  string
	sc    *scenario
	param int
	fail  float64 // --sink-fail
	size  int     // message body bytes
}

// newQueue creates a queue for this run and schedules its deletion.
func (e *env) newQueue(ctx context.Context, suffix string, fifo bool) (queueURL, arn string, err error) {
	name := e.prefix + suffix
	if fifo {
		name += ".fifo"
	}
	queueURL, arn, err = e.ctl.createQueue(ctx, name, fifo)
	if err != nil {
		return "", "", err
	}
	e.cleanups = append(e.cleanups, func(ctx context.Context) error { return e.ctl.deleteQueue(ctx, queueURL) })
	return queueURL, arn, nil
}

// payload returns a body of exactly size bytes of plain ASCII.
func payload(size int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	return strings.Repeat(alphabet, size/len(alphabet)+1)[:max(size, 1)]
}

// stampedBody returns a body of about size bytes starting with the current
// wall-clock time, so a receiver can compute end-to-end latency.
func stampedBody(pad string) string {
	var b [32]byte
	s := strconv.AppendInt(append(b[:0], "ts="...), time.Now().UnixNano(), 10)
	s = append(s, ';')
	if len(s) >= len(pad) {
		return string(s)
	}
	return string(s) + pad[len(s):]
}

// stampOf extracts the send time from a stamped body, also when the body is
// an SNS JSON envelope (a server that ignores RawMessageDelivery).
func stampOf(body string) (time.Time, bool) {
	if strings.HasPrefix(body, "{") {
		var env struct{ Message string }
		if json.Unmarshal([]byte(body), &env) != nil {
			return time.Time{}, false
		}
		body = env.Message
	}
	rest, ok := strings.CutPrefix(body, "ts=")
	if !ok {
		return time.Time{}, false
	}
	num, _, ok := strings.Cut(rest, ";")
	if !ok {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

func prepareSend(ctx context.Context, e *env) (*workload, error) {
	q, _, err := e.newQueue(ctx, "", false)
	if err != nil {
		return nil, err
	}
	m := entry{body: payload(e.size)}
	return &workload{step: func(ctx context.Context, w *worker) error {
		return w.do("send", func() (int, error) { return 1, e.dp.sendMessage(ctx, q, m) })
	}}, nil
}

// batchOf returns n copies of one body as batch entries.
func batchOf(n, size int) []entry {
	es := make([]entry, n)
	for i := range es {
		es[i].body = payload(size)
	}
	return es
}

func prepareSendBatch(ctx context.Context, e *env) (*workload, error) {
	q, _, err := e.newQueue(ctx, "", false)
	if err != nil {
		return nil, err
	}
	es := batchOf(10, e.size)
	return &workload{step: func(ctx context.Context, w *worker) error {
		return w.do("send-batch", func() (int, error) { return len(es), e.dp.sendMessageBatch(ctx, q, es) })
	}}, nil
}

// prepareDrain holds a backlog of --queued: each worker, after deleting n
// messages, sends n back with one SendMessageBatch (op "refill", the raw
// client whatever the client under test, so both kinds put the same load on
// the server). Without it a backlog of 10,000 empties in well under a
// second and the timed phase measures an empty queue. Both targets get the
// same three calls per step, so the ratio stays fair; the server CPU per
// call includes the refill, whose latency is a row of its own.
func prepareDrain(ctx context.Context, e *env) (*workload, error) {
	q, _, err := e.newQueue(ctx, "", false)
	if err != nil {
		return nil, err
	}
	if err := prefill(ctx, e, q, e.cfg.queued); err != nil {
		return nil, err
	}
	refill := batchOf(10, e.size)
	return &workload{step: func(ctx context.Context, w *worker) error {
		var msgs []message
		err := w.do("receive", func() (int, error) {
			var err error
			msgs, err = e.dp.receiveMessage(ctx, q, 10, 0)
			return len(msgs), err
		})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			// A short poll may miss messages held by other workers;
			// several empties in a row mean the queue is drained (a
			// backlog smaller than the clients' ten each, or refills
			// failing).
			if w.misses++; w.misses >= 3 {
				return errStop
			}
			return nil
		}
		w.misses = 0
		handles := receipts(msgs)
		if err := w.do("delete", func() (int, error) { return len(handles), e.dp.deleteMessageBatch(ctx, q, handles) }); err != nil {
			return err
		}
		batch := refill[:len(msgs)]
		return w.do("refill", func() (int, error) { return len(batch), e.fill.sendMessageBatch(ctx, q, batch) })
	}, finish: func(ctx context.Context, _ statSet) []string {
		return drainNotes(ctx, e, q)
	}}, nil
}

// drainNotes gives fanout's backlog at the end: near --queued, or the
// figures measured something else (the null server stores nothing).
func drainNotes(ctx context.Context, e *env, q string) []string {
	if isNull(e.tgt.name) {
		return nil
	}
	depth, err := e.ctl.queueDepth(ctx, q)
	if err != nil {
		return []string{"drain: queue depth at the end unknown: " + err.Error()}
	}
	return []string{fmt.Sprintf("drain: queue depth at the end %d (--queued %d)", depth, e.cfg.queued)}
}

func receipts(msgs []message) []string {
	hs := make([]string, len(msgs))
	for i, m := range msgs {
		hs[i] = m.receiptHandle
	}
	return hs
}

// prefill puts n messages on q with batch sends from --clients goroutines,
// untimed, printing progress for big fills.
func prefill(ctx context.Context, e *env, q string, n int) error {
	es := batchOf(10, e.size)
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	progress := time.NewTicker(5 * time.Second)
	defer progress.Stop()
	finished := make(chan struct{})
	for range e.cfg.clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				from := next.Add(10) - 10
				if from >= int64(n) {
					return
				}
				batch := es[:min(10, int64(n)-from)]
				if err := e.fill.sendMessageBatch(ctx, q, batch); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				done.Add(int64(len(batch)))
			}
		})
	}
	go func() { wg.Wait(); close(finished) }()
	for {
		select {
		case <-finished:
			if firstErr != nil {
				return fmt.Errorf("pre-fill: %w", firstErr)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			e.prefilled = true
			e.notes = append(e.notes, fmt.Sprintf("pre-filled %d messages in %.1fs", n, time.Since(start).Seconds()))
			return nil
		case <-progress.C:
			fmt.Fprintf(os.Stderr, "  pre-fill: %d/%d messages\n", done.Load(), n)
		}
	}
}

// feed tracks how many messages a queue is owed, so receivers only ask for
// messages producers actually sent. The null server always has messages;
// with this it sees the same receive traffic a real queue would cause.
// A receiver claims the messages it asks for before it asks, so that two
// receivers never ask for the same ones: the null server would answer both
// in full, where a queue gives each message to one of them, and the null
// server's receivers would then need fewer calls for the same messages.
type feed struct {
	sent    *atomic.Int64 // shared by all feeds of one producer set
	claimed atomic.Int64  // asked for by a receive, or received
	kick    chan struct{} // wakes a receiver waiting for messages
}

// claim takes up to most of the messages owed and not yet claimed.
func (f *feed) claim(most int64) int64 {
	for {
		c := f.claimed.Load()
		owed := f.sent.Load() - c
		if owed <= 0 {
			return 0
		}
		n := min(owed, most)
		if f.claimed.CompareAndSwap(c, c+n) {
			return n
		}
	}
}

// unclaim gives back n claimed messages a receive did not bring, and wakes
// a receiver for them.
func (f *feed) unclaim(n int64) {
	if n <= 0 {
		return
	}
	f.claimed.Add(-n)
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func newFeeds(n int) []*feed {
	sent := new(atomic.Int64)
	fs := make([]*feed, n)
	for i := range fs {
		fs[i] = &feed{sent: sent, kick: make(chan struct{}, 1)}
	}
	return fs
}

// produced records n more messages for every feed and wakes their receivers.
func produced(fs []*feed, n int) {
	fs[0].sent.Add(int64(n))
	for _, f := range fs {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
}

// receiveLoop long-polls q for what f is owed, deletes what it gets and
// samples e2e latency from stamped bodies sent during this phase. It returns
// when the phase ends, but lets a poll in flight finish and deletes what it
// brought: a poll cut off client-side may still have taken messages, which
// would then stay invisible, and on a FIFO queue lock their group, for the
// whole visibility timeout.
func receiveLoop(ctx context.Context, w *worker, dp dataPlane, q string, f *feed) {
	stop := w.ph.stop
	for stop.Err() == nil {
		n := f.claim(10)
		if n == 0 {
			select {
			case <-f.kick:
			case <-stop.Done():
			}
			continue
		}
		var msgs []message
		err := w.do("receive", func() (int, error) {
			var err error
			msgs, err = dp.receiveMessage(ctx, q, int(n), 1)
			return len(msgs), err
		})
		f.unclaim(n - int64(len(msgs)))
		if err != nil {
			time.Sleep(time.Millisecond) // don't spin on a failing server
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		now := time.Now()
		for _, m := range msgs {
			// Messages left over from the warm-up would overstate latency.
			if ts, ok := stampOf(m.body); ok && !ts.Before(w.ph.start) {
				w.sample("e2e", now.Sub(ts))
			}
		}
		handles := receipts(msgs)
		w.do("delete", func() (int, error) { return len(handles), dp.deleteMessageBatch(ctx, q, handles) })
	}
}

func prepareFIFO(ctx context.Context, e *env) (*workload, error) {
	q, _, err := e.newQueue(ctx, "", true)
	if err != nil {
		return nil, err
	}
	groups := uint64(max(e.param, 1))
	senders := max(1, e.cfg.clients/2)
	receivers := max(1, e.cfg.clients-senders)
	pad := payload(e.size)
	fs := newFeeds(1)
	// Dedup ids must be unique across warm-up and timed phase, hence one
	// counter for the whole run rather than per worker.
	var seq atomic.Uint64
	wl := &workload{workers: senders, step: func(ctx context.Context, w *worker) error {
		n := seq.Add(1)
		m := entry{
			body:    stampedBody(pad),
			groupID: "g" + strconv.FormatUint(n%groups, 10),
			dedupID: "d" + strconv.FormatUint(n, 10),
		}
		err := w.do("send", func() (int, error) { return 1, e.dp.sendMessage(ctx, q, m) })
		if err == nil {
			produced(fs, 1)
		}
		return err
	}}
	for range receivers {
		wl.receivers = append(wl.receivers, func(ctx context.Context, w *worker) { receiveLoop(ctx, w, e.dp, q, fs[0]) })
	}
	return wl, nil
}

func preparePublish(ctx context.Context, e *env) (*workload, error) {
	subs := max(e.param, 1)
	return publishWorkload(ctx, e, subs, nil, func(int) map[string]string {
		return map[string]string{"RawMessageDelivery": "true"}
	})
}

// preparePublishEnvelope is publish with enveloped (signed) deliveries.
func preparePublishEnvelope(ctx context.Context, e *env) (*workload, error) {
	return publishWorkload(ctx, e, max(e.param, 1), nil, func(int) map[string]string { return nil })
}

// preparePublishFiltered is publish-filtered: with param N, N subscriptions
// with filter policies of which filteredMatches match; with param 0 (the
// baseline), filteredMatches unfiltered subscriptions. Either way every
// message carries filterAttrs and reaches filteredMatches queues.
func preparePublishFiltered(ctx context.Context, e *env) (*workload, error) {
	n := e.param
	if n == 0 {
		return publishWorkload(ctx, e, filteredMatches, newPubAttrs(filterAttrs), func(int) map[string]string {
			return map[string]string{"RawMessageDelivery": "true"}
		})
	}
	e.notes = append(e.notes, fmt.Sprintf("%d subscriptions with 5-key filter policies, %d of them match", n, filteredMatches))
	return publishWorkload(ctx, e, n, newPubAttrs(filterAttrs), func(i int) map[string]string {
		return map[string]string{"RawMessageDelivery": "true", "FilterPolicy": filterPolicy(i, n)}
	})
}

// publishWorkload creates a topic with subs SQS subscriptions, subscription
// i with the attributes subAttrs(i), and publishes stamped --size bodies
// with attrs. Receivers drain the last subscription that gets messages.
func publishWorkload(ctx context.Context, e *env, subs int, attrs *pubAttrs, subAttrs func(i int) map[string]string) (*workload, error) {
	topic, err := e.ctl.createTopic(ctx, e.prefix)
	if err != nil {
		return nil, err
	}
	e.cleanups = append(e.cleanups, func(ctx context.Context) error { return e.ctl.deleteTopic(ctx, topic) })
	var sampled string
	receiving := 0
	for i := range subs {
		q, arn, err := e.newQueue(ctx, "-"+strconv.Itoa(i), false)
		if err != nil {
			return nil, err
		}
		sa := subAttrs(i)
		if err := e.ctl.subscribe(ctx, topic, "sqs", arn, sa); err != nil {
			return nil, err
		}
		if sa["FilterPolicy"] == "" || filterMatches(i, subs) {
			receiving++
			sampled = q // the last one, in case delivery follows subscription order
		}
	}
	if receiving > 1 {
		e.notes = append(e.notes, fmt.Sprintf("e2e sampled on 1 of %d queues; the others fill up and are deleted after the run", receiving))
	}
	// Only one queue is drained: receivers for every queue would need
	// subs times the publishers' client CPU, and on a small machine they
	// would fall behind, so e2e would measure their backlog rather than
	// the server. Several receivers share the sampled queue so it stays
	// near empty even with --subs 1 at full publish rate.
	fs := newFeeds(1)
	wl := &workload{}
	for range max(2, e.cfg.clients/2) {
		wl.receivers = append(wl.receivers, func(ctx context.Context, w *worker) { receiveLoop(ctx, w, e.dp, sampled, fs[0]) })
	}
	pad := payload(e.size)
	wl.step = func(ctx context.Context, w *worker) error {
		body := stampedBody(pad)
		err := w.do("publish", func() (int, error) { return 1, e.dp.publish(ctx, topic, body, attrs) })
		if err == nil {
			produced(fs, 1)
		}
		return err
	}
	return wl, nil
}
