package crashtest

import (
	"context"
	"fmt"
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
	"github.com/aws/aws-sdk-go-v2/service/sns"
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
		if done%50 == 0 {
			t.Logf("%d cycles in %s, %d violations so far", done, time.Since(start).Round(time.Second), h.v.total())
		}
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
	w := &workers{h: h, ctx: ctx, del: make(chan *hnd, 1<<14), vis: make(chan *hnd, 1<<14),
		qdel: make(chan *hnd, 1<<14), qvis: make(chan *hnd, 1<<14), cycle: cycle}
	n := 0
	next := func() int { n++; return n }
	for _, query := range []bool{false, true} { // one of each over the Query protocol
		w.spawn(next(), w.stdSender(qStd, query, 400))
		w.spawn(next(), w.receiver(qStd, visStd, 10, query))
		w.spawn(next(), w.deleter(w.del, query))
	}
	for _, g := range groups {
		w.spawn(next(), w.fifoSender(qFIFO, g, false, 300))
	}
	w.spawn(next(), w.receiver(qFIFO, visFIFO, 3, false))
	w.spawn(next(), w.receiver(qFanRaw, visStd, 10, false))
	w.spawn(next(), w.receiver(qFanEnv, visStd, 10, false))
	w.spawn(next(), w.visChanger(w.vis, w.del, false))
	w.spawn(next(), w.publisher)
	for _, g := range pubGroups {
		w.spawn(next(), w.fifoPublisher(g))
	}
	w.spawn(next(), w.receiver(qFanFIFO, visFIFO, 3, false))
	w.spawn(next(), w.redriver)
	w.spawn(next(), w.stdSender(qStd2, false, 200))
	w.spawn(next(), w.receiver(qStd2, visStd, 10, false))
	// qQFIFO: every call over the Query protocol (spawned last, so that
	// the other workers' random choices stay those of earlier seeds).
	for _, g := range queryGroups {
		w.spawn(next(), w.fifoSender(qQFIFO, g, true, 150))
	}
	w.spawn(next(), w.receiver(qQFIFO, visFIFO, 3, true))
	w.spawn(next(), w.deleter(w.qdel, true))
	w.spawn(next(), w.visChanger(w.qvis, w.qdel, true))
	died := false
	select {
	case <-time.After(d):
	case <-p.done:
		died = true
	}
	h.batchRetry = false
	switch {
	case !kill || died:
	case cycle%3 == 2:
		// Every third kill waits (up to 2 s) for a snapshot to be
		// written, so that many kills cut one off.
		waitFor(2*time.Second, func() bool { _, writing := snapshotFiles(p.dir); return writing })
	case cycle%3 == 1:
		// And one of the others waits (up to 1 s) for a PublishBatch
		// with a duplicate entry to be in flight, so that many kills
		// cut one off; the checkpoint retries it as a PublishBatch.
		if waitFor(time.Second, func() bool { return h.dupBatches.Load() > 0 }) {
			h.st.killsInDupBatch.Add(1)
			h.batchRetry = true
		}
	}
	if kill {
		p.kill()
		h.afterKill(p.dir)
	}
	cancel()
	w.wg.Wait()
	h.l.crashed()
	return died
}

// waitFor polls cond until it holds (true) or d passed (false).
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Microsecond) {
		if cond() {
			return true
		}
	}
	return false
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
		l.checkParked(q, peek, "after a restart")
	}
	running, err := h.checkPair(ctx, p)
	if err != nil {
		t.Fatalf("cycle %d: %v\n%s", l.cycle, err, p.tail())
	}
	// Dedup across the crash: the unanswered FIFO sends and publishes and
	// the last answered one of each group, again with the same
	// deduplication id.
	if err := h.resendFIFO(ctx, l.fifoToResend()); err != nil {
		t.Fatalf("cycle %d: %v\n%s", l.cycle, err, p.tail())
	}
	pubPeek, err := p.peekAll(ctx, qFanFIFO)
	if err != nil {
		t.Fatalf("cycle %d: %v", l.cycle, err)
	}
	l.checkCopies(qFanFIFO, pubPeek)
	for _, q := range []string{qFIFO, qQFIFO} {
		peek, err := p.peekAll(ctx, q)
		if err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		l.checkCopies(q, peek)
		if err := h.retryLostReceive(ctx, q, peek); err != nil {
			t.Fatalf("cycle %d: %v\n%s", l.cycle, err, p.tail())
		}
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
				ok = h.deleteOne(ctx, hs[0], q == qQFIFO)
			} else {
				ok = h.deleteBatch(ctx, q, hs[:n], q == qQFIFO)
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
	// A move task running at the restart resumes and finishes: a tick a
	// second on the clock, 5 messages a tick.
	for try := 0; running > 0; try++ {
		if try == 40 {
			h.v.add(l.cycle, invTask, fmt.Sprintf("%s tasks, cycle %d", qDLQ, l.cycle), "%d move tasks still running after %d s more on the clock", running, try)
			break
		}
		if err := p.advance(ctx, time.Second); err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		moved += time.Second
		l.offset += time.Second
		st, err := h.tasks(ctx)
		if err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		if running = count(st, "RUNNING"); running == 0 {
			h.st.tasksResumed.Add(1)
		}
	}
	if rest := settleAdvance - moved; rest > 0 {
		if err := p.advance(ctx, rest); err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		l.offset += rest
	}
	// A visibility timeout a batch change gave outlasts the clock's move
	// (a lost change would have ended with the receive's: 60 s, 20 s).
	for _, q := range []string{qStd, qQFIFO} {
		peek, err := p.peekAll(ctx, q)
		if err != nil {
			t.Fatalf("cycle %d: %v", l.cycle, err)
		}
		l.checkParked(q, peek, "after the clock moved")
	}
}

// resendFIFO sends ms again after a restart, each with its deduplication
// id: to the FIFO topic with Publish, or on odd cycles and after a kill
// that cut a PublishBatch with a duplicate off with PublishBatch
// (up to ten entries at a time, each group in order), each publish that
// had a duplicate followed by its duplicate again; to qFIFO over AWS JSON
// and to qQFIFO over the Query protocol. Then it publishes the duplicates
// of a few older publishes, still within the deduplication window. An
// error is one that is no answer.
func (h *harness) resendFIFO(ctx context.Context, ms []*msg) error {
	l := h.l
	var batch []*msg
	for _, m := range ms {
		if m.queue != qFanFIFO {
			id, seq, err := h.sendFIFO(ctx, m, m.queue == qQFIFO)
			if err != nil {
				return fmt.Errorf("resending %s to %s: %w", m.key, m.queue, err)
			}
			l.resent(m, id, seq)
			h.st.resends.Add(1)
			if m.queue == qQFIFO {
				h.st.queryResends.Add(1)
			}
			continue
		}
		if l.cycle%2 == 1 || h.batchRetry {
			batch = append(batch, m)
			continue
		}
		if err := h.republish(ctx, m); err != nil {
			return err
		}
	}
	for len(batch) > 0 {
		n := entriesFit(batch)
		if err := h.republishBatch(ctx, batch[:n], false); err != nil {
			return err
		}
		batch = batch[n:]
	}
	if late := l.dupsToSend(ms, 5); len(late) > 0 {
		return h.republishBatch(ctx, late, true)
	}
	return nil
}

// republish publishes m again with Publish, then its duplicate if it had
// one.
func (h *harness) republish(ctx context.Context, m *msg) error {
	if _, err := h.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(h.fifoARN), Message: aws.String(m.key),
		MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.key)}); err != nil {
		code, ok := answered(err)
		if !ok {
			return fmt.Errorf("publishing %s again: %w", m.key, err)
		}
		h.noteErr("Publish FIFO again", code) // a lost topic: checkTopology counted it
		return nil
	}
	h.l.resent(m, "", "")
	h.st.resends.Add(1)
	if !m.dupAfter {
		return nil
	}
	if _, err := h.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(h.fifoARN), Message: aws.String(m.key + dupSuffix),
		MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.key)}); err != nil {
		code, ok := answered(err)
		if !ok {
			return fmt.Errorf("publishing the duplicate of %s again: %w", m.key, err)
		}
		h.noteErr("Publish FIFO duplicate again", code)
		h.l.mu.Lock()
		h.l.violate(invDupEntry, m, "a Publish of its duplicate after a restart failed with %s; AWS accepts a duplicate as published, and drops it", code)
		h.l.mu.Unlock()
		return nil
	}
	h.st.dupResends.Add(1)
	return nil
}

// entriesFit is how many of ms (and their duplicates) one PublishBatch
// of at most ten entries holds.
func entriesFit(ms []*msg) int {
	n, entries := 0, 0
	for _, m := range ms {
		e := 1
		if m.dupAfter {
			e = 2
		}
		if entries+e > 10 {
			break
		}
		n, entries = n+1, entries+e
	}
	return n
}

// republishBatch publishes ms again in one PublishBatch, each followed by
// its duplicate if it had one; with onlyDups, it publishes their
// duplicates alone (each message was acknowledged before the restart, so
// every entry must be dropped).
func (h *harness) republishBatch(ctx context.Context, ms []*msg, onlyDups bool) error {
	l := h.l
	entries, _ := l.fifoEntries(ms)
	if onlyDups {
		entries = entries[:0]
		for i, m := range ms {
			entries = append(entries, dupEntryOf(m, "d"+strconv.Itoa(i)))
		}
	}
	out, err := h.sns.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(h.fifoARN), PublishBatchRequestEntries: entries})
	if err != nil {
		code, ok := answered(err)
		if !ok {
			return fmt.Errorf("publishing %s and %d more again: %w", ms[0].key, len(ms)-1, err)
		}
		h.noteErr("PublishBatch FIFO again", code)
		return nil
	}
	for _, s := range out.Successful {
		if m, dup := dupEntry(*s.Id, ms); dup {
			h.st.dupResends.Add(1)
			switch {
			case onlyDups:
				h.st.lateDupes.Add(1)
			case m.unansweredIn == l.cycle-1:
				h.st.cutDupRetries.Add(1) // the kill cut off the PublishBatch that carried it
			}
			continue
		}
		i, _ := strconv.Atoi(*s.Id)
		l.resent(ms[i], "", "")
		h.st.resends.Add(1)
		h.st.pubBatchResends.Add(1)
	}
	for _, f := range out.Failed {
		h.refusedEntry("PublishBatch FIFO again, entry", *f.Id, *f.Code, ms)
	}
	return nil
}

// retryLostReceive retries, with its attempt id, a receive from queue (a
// FIFO queue whose messages are peek) that the kill cut off: if it took
// messages, the retry returns those (their handles are then used). An
// error is one that is no answer.
func (h *harness) retryLostReceive(ctx context.Context, queue string, peek []peeked) error {
	l := h.l
	attempt, lost, maybe := l.takeLostReceive(queue, peek)
	if attempt == "" {
		return nil
	}
	// No wait: nothing sends now, and a replay answers at once.
	got, err := h.receive(ctx, queue, visFIFO, 0, attempt, queue == qQFIFO)
	if err != nil {
		return fmt.Errorf("retrying a receive from %s: %w", queue, err)
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
			h.v.add(l.cycle, invReplay, attempt, "%d messages of %s were in flight that only the cut-off receive can have taken (%s); its retry returned %d, missing %d of them, and %v",
				len(lost), queue, strings.Join(was, ", "), len(got), len(missing), extra)
		}
	}
	l.receive(queue, got, visFIFO)
	return nil
}

// afterKill notes whether the kill cut a snapshot off and whether the log
// was compacted since the last kill.
func (h *harness) afterKill(dir string) {
	if dir == "" {
		return
	}
	newest, writing := snapshotFiles(dir)
	if writing {
		h.st.killsInSnapshot.Add(1)
	}
	if newest > h.lastSnap {
		h.st.compactions.Add(int64(newest - h.lastSnap))
		h.lastSnap = newest
	}
}

// checkPair checks qSrc and qDLQ as one after a restart (see mergePair),
// and their move tasks; it returns how many of those are running.
func (h *harness) checkPair(ctx context.Context, p *proc) (int, error) {
	st, err := h.tasks(ctx)
	if err != nil {
		return 0, err
	}
	running := h.l.checkTasks(st)
	for try := 0; ; try++ {
		var looks [3][]peeked
		for i, q := range []string{qDLQ, qSrc, qDLQ} {
			if looks[i], err = p.peekAll(ctx, q); err != nil {
				return 0, err
			}
		}
		merged := h.l.mergePair(looks[0], looks[1], looks[2])
		if try == 2 || !h.l.pairMissing(merged) {
			h.st.deadLettered.Add(int64(len(looks[2])))
			h.l.checkQueue(qSrc, merged)
			return running, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tasks are the statuses of qDLQ's 10 newest move tasks.
func (h *harness) tasks(ctx context.Context) ([]string, error) {
	out, err := h.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(h.arns[qDLQ]), MaxResults: aws.Int32(10)})
	if err != nil {
		return nil, fmt.Errorf("ListMessageMoveTasks: %w", err)
	}
	st := make([]string, len(out.Results))
	for i, r := range out.Results {
		st[i] = aws.ToString(r.Status)
	}
	return st, nil
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
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
	fmt.Fprintf(&b, "; over the Query protocol: %d sends (%d of them to a FIFO queue, and %d FIFO resends after a crash), %d messages received, %d deletes, %d visibility changes (%d of them in %d ChangeMessageVisibilityBatch calls, %d of those left in flight for their timeout, across restarts and clock moves); %d sends to a second namespace; "+
		"%d publishes to a FIFO topic (%d of them in %d PublishBatch calls, and %d FIFO resends after a crash with PublishBatch); "+
		"%d PublishBatch calls with an entry repeating another's deduplication id (%d such entries answered as published, and %d such duplicates published again after a restart: %d in the retry of a PublishBatch the kill cut off, %d alone, of older publishes); "+
		"%d sends to a queue with a dead-letter queue, %d messages seen in that DLQ at checkpoints, %d move tasks started (%d running at a kill, finished after it), %d messages received again after a move task; "+
		"%d kills during a snapshot, %d during a PublishBatch with a duplicate entry, %d compactions",
		s.querySends.Load(), s.queryFIFOSends.Load(), s.queryResends.Load(), s.queryReceives.Load(), s.queryDeletes.Load(), s.queryVisChanges.Load(), s.queryVisBatchEntries.Load(), s.queryVisBatches.Load(), s.queryVisParked.Load(), s.ns2Sends.Load(),
		s.fifoPublishes.Load(), s.pubBatchEntries.Load(), s.pubBatches.Load(), s.pubBatchResends.Load(),
		s.pubBatchesWithDupes.Load(), s.pubBatchDupes.Load(), s.dupResends.Load(), s.cutDupRetries.Load(), s.lateDupes.Load(),
		s.redriveSends.Load(), s.deadLettered.Load(), s.taskStarts.Load(), s.tasksResumed.Load(), h.l.backsSeen(),
		s.killsInSnapshot.Load(), s.killsInDupBatch.Load(), s.compactions.Load())
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
