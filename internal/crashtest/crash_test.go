package crashtest

import (
	"context"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestKillNineKeepsEveryAcknowledgedCall is issue 14's crash loop: fanout
// on a data dir, SQS and SNS clients calling it concurrently, SIGKILL at a
// random moment, a restart on the same dir, and a check of every invariant
// against what the clients were acknowledged (see ledger_test.go). A few
// cycles by default; FANOUT_CRASH_CYCLES=200 for the long run
// (FANOUT_CRASH_SEED=N repeats a run's random choices, not its timing;
// FANOUT_CRASH_FLAGS adds serve flags, such as a durability mode to try).
func TestKillNineKeepsEveryAcknowledgedCall(t *testing.T) {
	cycles, budget := 5, 30*time.Second // bounded for go test ./...
	if n, err := strconv.Atoi(os.Getenv("FANOUT_CRASH_CYCLES")); err == nil {
		cycles, budget = n, 0
	}
	seed := uint64(time.Now().UnixNano())
	if n, err := strconv.ParseUint(os.Getenv("FANOUT_CRASH_SEED"), 10, 64); err == nil {
		seed = n
	}
	t.Logf("FANOUT_CRASH_SEED=%d, %d cycles", seed, cycles)
	bin := buildFanout(t)
	start := time.Now()
	dir, port := t.TempDir(), freePort(t)
	hk := newHook(t)
	p, err := startFanout(bin, dir, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	h := newHarness(p.url, hk, seed)
	ctx := context.Background()
	if err := h.setup(ctx); err != nil {
		t.Fatalf("setup: %v\n%s", err, p.tail())
	}
	rnd := rand.New(rand.NewPCG(seed, 0))
	done := 0
	var maxRecovery time.Duration
	var slowest string
	tornTails := 0
	for cycle := range cycles {
		if budget > 0 && cycle > 0 && time.Since(start) > budget*2/3 {
			break
		}
		h.l.cycle = cycle
		if died := h.run(p, cycle, time.Duration(150+rnd.IntN(1200))*time.Millisecond, true); died {
			t.Fatalf("cycle %d: fanout exited before it was killed:\n%s", cycle, p.tail())
		}
		h.l.cycle = cycle + 1
		if p, err = startFanout(bin, dir, port); err != nil {
			t.Fatalf("restart after cycle %d: %v", cycle, err)
		}
		took, line, torn := p.recovered()
		if took >= maxRecovery {
			maxRecovery, slowest = took, line
		}
		tornTails += torn
		h.checkpoint(t, p)
		done++
	}
	// A clean stop must keep everything too.
	h.l.cycle = done + 1
	if err := p.stop(); err != nil {
		t.Error(err)
	}
	if p, err = startFanout(bin, dir, port); err != nil {
		t.Fatalf("restart after a clean stop: %v", err)
	}
	h.checkpoint(t, p)
	if err := p.stop(); err != nil {
		t.Error(err)
	}
	t.Logf("%d crash cycles and a clean restart in %s; acknowledged: %s", done, time.Since(start).Round(time.Second), h.summary())
	t.Logf("recovery: at most %s per restart; %d torn tails dropped; data dir %d bytes at the end; the slowest start said:\n%s", maxRecovery, tornTails, dirBytes(dir), slowest)
	t.Logf("violations by invariant:\n%s", h.v.report())
	if n := h.v.total(); n > 0 {
		t.Errorf("%d invariant violations over %d crash cycles (seed %d); see above", n, done, seed)
	}
}

// TestChecksHoldWithoutACrash runs the same clients and checks against an
// in-memory fanout that is never killed, the clients only stopped: every
// invariant must hold, or the harness itself is wrong.
func TestChecksHoldWithoutACrash(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("FANOUT_CRASH_SEED=%d", seed)
	bin := buildFanout(t)
	hk := newHook(t)
	p, err := startFanout(bin, "", freePort(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	h := newHarness(p.url, hk, seed)
	if err := h.setup(context.Background()); err != nil {
		t.Fatalf("setup: %v\n%s", err, p.tail())
	}
	rnd := rand.New(rand.NewPCG(seed, 0))
	for cycle := range 3 {
		h.l.cycle = cycle
		h.run(p, cycle, time.Duration(150+rnd.IntN(1200))*time.Millisecond, false)
		h.l.cycle = cycle + 1
		h.checkpoint(t, p)
	}
	t.Logf("acknowledged: %s", h.summary())
	if n := h.v.total(); n > 0 {
		t.Errorf("%d violations without a crash (seed %d):\n%s", n, seed, h.v.report())
	}
}

// run runs the clients for d, then kills fanout (or, without kill, stops
// the clients) and waits for them. It reports whether fanout died before
// the kill.
func (h *harness) run(p *proc, cycle int, d time.Duration, kill bool) bool {
	ctx, cancel := context.WithCancel(context.Background())
	w := &workers{h: h, ctx: ctx, del: make(chan *hnd, 1<<14), vis: make(chan *hnd, 1<<14), cycle: cycle}
	n := 0
	next := func() int { n++; return n }
	for range 2 {
		w.spawn(next(), w.stdSender)
		w.spawn(next(), w.receiver(qStd, visStd, 10))
		w.spawn(next(), w.deleter)
	}
	for _, g := range groups {
		w.spawn(next(), w.fifoSender(g))
	}
	w.spawn(next(), w.receiver(qFIFO, visFIFO, 3))
	w.spawn(next(), w.receiver(qFanRaw, visStd, 10))
	w.spawn(next(), w.receiver(qFanEnv, visStd, 10))
	w.spawn(next(), w.visChanger)
	w.spawn(next(), w.publisher)
	died := false
	select {
	case <-time.After(d):
	case <-p.done:
		died = true
	}
	if kill {
		p.kill()
	}
	cancel()
	w.wg.Wait()
	h.l.crashed()
	return died
}

// checkpoint checks a restarted fanout against the ledger, then settles it
// for the next run: handles held across the crash are used, retries that
// were pending must happen, and the clock moves on so that what a crash
// left in flight comes back.
func (h *harness) checkpoint(t *testing.T, p *proc) {
	t.Helper()
	h.tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := h.l
	off, err := p.clockOffset(ctx)
	if err != nil {
		t.Fatalf("cycle %d: %v", l.cycle, err)
	}
	if got := time.Duration(off * float64(time.Second)); got < l.offset-time.Second {
		h.v.add(l.cycle, invClock, "clock", "offset %s after a restart, %s acknowledged before", got, l.offset)
		l.offset = got
	}
	lost, err := h.checkTopology(ctx)
	if err != nil {
		t.Fatalf("cycle %d: %v\n%s", l.cycle, err, p.tail())
	}
	for _, q := range queues {
		var peek []peeked
		if !lost[q] {
			if peek, err = p.peekAll(ctx, q); err != nil {
				t.Fatalf("cycle %d: %v", l.cycle, err)
			}
		}
		l.checkQueue(q, peek)
	}
	// Dedup across the crash: the unanswered FIFO sends and the last
	// answered one of each group, again with the same deduplication id.
	for _, m := range l.fifoToResend() {
		out, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.urls[qFIFO]), MessageBody: aws.String(m.key),
			MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.key)})
		if err != nil {
			t.Fatalf("cycle %d: resending %s: %v\n%s", l.cycle, m.key, err, p.tail())
		}
		l.resent(m, *out.MessageId, aws.ToString(out.SequenceNumber))
		h.st.resends.Add(1)
	}
	peek, err := p.peekAll(ctx, qFIFO)
	if err != nil {
		t.Fatalf("cycle %d: %v", l.cycle, err)
	}
	l.checkCopies(peek)
	// A FIFO receive the kill cut off, retried with its attempt id: if it
	// took messages, the retry returns those (their handles are then used).
	if attempt, lost, maybe := l.takeLostReceive(peek); attempt != "" {
		got, err := h.receive(ctx, qFIFO, visFIFO, aws.String(attempt))
		if err != nil {
			t.Fatalf("cycle %d: retrying a receive: %v\n%s", l.cycle, err, p.tail())
		}
		if len(lost) > 0 {
			h.st.replays.Add(1)
			// It must return every one of those, and nothing but those and
			// the ones it may have taken.
			missing, extra := maps.Clone(lost), []string{}
			for _, r := range got {
				delete(missing, r.id)
				if lost[r.id] == "" && maybe[r.id] == "" {
					extra = append(extra, r.body)
				}
			}
			if len(missing) > 0 || len(extra) > 0 {
				was := slices.Sorted(maps.Values(lost))
				h.v.add(l.cycle, invReplay, attempt, "%d messages were in flight that only the cut-off receive can have taken (%s); its retry returned %d, missing %d of them, and %v",
					len(lost), strings.Join(was, ", "), len(got), len(missing), extra)
			}
		}
		l.receive(qFIFO, got, visFIFO)
	}
	// Handles held across the crash: each still deletes its message.
	byQueue := map[string][]*hnd{}
	for _, hd := range l.heldHandles() {
		byQueue[hd.m.queue] = append(byQueue[hd.m.queue], hd)
	}
	before := h.st.deletes.Load()
	defer func() { h.st.carriedOK.Add(h.st.deletes.Load() - before) }()
	for q, hs := range byQueue {
		for len(hs) > 0 {
			n := min(len(hs), 1+len(hs)%10)
			ok := true
			if n == 1 {
				ok = h.deleteOne(ctx, hs[0])
			} else {
				ok = h.deleteBatch(ctx, q, hs[:n])
			}
			if !ok {
				t.Fatalf("cycle %d: deleting with handles from before the crash: the connection failed\n%s", l.cycle, p.tail())
			}
			h.st.carriedDeletes.Add(int64(n))
			hs = hs[n:]
		}
	}
	// Moving the clock ends every timeout the clients knew of.
	l.dropHandles()
	moved := time.Duration(0)
	pending := -1
	for try := 0; ; try++ {
		late := l.undelivered(h.hook.wasDelivered)
		if pending < 0 {
			pending = len(late)
		}
		if len(late) == 0 {
			h.st.resumed.Add(int64(pending))
			break
		}
		if try == 15 {
			ids := make([]string, len(late))
			for i, pb := range late {
				pb.reported = true
				ids[i] = pb.id
				h.v.add(l.cycle, invHTTP, pb.body, "MessageId %s, published in cycle %d, not delivered after %s more on the clock", pb.id, pb.cycle, moved)
			}
			sort.Strings(ids)
			t.Logf("cycle %d: never delivered: %s", l.cycle, strings.Join(ids, " "))
			h.st.resumed.Add(int64(pending - len(late)))
			break
		}
		if err := p.advance(ctx, 2*time.Second); err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		moved += 2 * time.Second
		l.offset += 2 * time.Second
	}
	if rest := settleAdvance - moved; rest > 0 {
		if err := p.advance(ctx, rest); err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		l.offset += rest
	}
}

func (h *harness) summary() string {
	s := &h.st
	msgs, attempts := h.hook.counts()
	var b strings.Builder
	b.WriteString(strconv.FormatInt(s.sends.Load(), 10) + " sends, " + strconv.FormatInt(s.receives.Load(), 10) + " messages received, " +
		strconv.FormatInt(s.deletes.Load(), 10) + " deletes (" + strconv.FormatInt(s.carriedOK.Load(), 10) + " of " + strconv.FormatInt(s.carriedDeletes.Load(), 10) + " tried with handles held across a restart), " +
		strconv.FormatInt(s.visChanges.Load(), 10) + " visibility changes, " + strconv.FormatInt(s.publishes.Load(), 10) + " publishes (" +
		strconv.Itoa(msgs) + " delivered to HTTP in " + strconv.Itoa(attempts) + " attempts, " + strconv.FormatInt(s.resumed.Load(), 10) + " of them pending at a kill and delivered after the restart), " + strconv.FormatInt(s.resends.Load(), 10) + " FIFO resends after a crash, " +
		strconv.FormatInt(s.replays.Load(), 10) + " cut-off FIFO receives retried with their attempt id")
	h.l.mu.Lock()
	if h.l.dupes > 0 {
		b.WriteString("; " + strconv.Itoa(h.l.dupes) + " second copies of a publish in a subscribed queue (at-least-once)")
	}
	h.l.mu.Unlock()
	h.errMu.Lock()
	defer h.errMu.Unlock()
	if len(h.errs) > 0 {
		keys := make([]string, 0, len(h.errs))
		for k := range h.errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("; errors fanout answered:")
		for _, k := range keys {
			b.WriteString(" " + k + " ×" + strconv.Itoa(h.errs[k]))
		}
	}
	return b.String()
}
