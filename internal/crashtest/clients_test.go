package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout/internal/sdktest"
)

// Visibility timeouts the receivers ask for: long enough that no handle a
// client holds goes stale within a run (the checkpoint moves the clock only
// after it dropped them), short enough that a FIFO group a crash left in
// flight opens again after a checkpoint or two.
const (
	visStd  = 60 * time.Second
	visFIFO = 20 * time.Second
	// settleAdvance is how far each checkpoint moves fanout's clock in all.
	settleAdvance = 30 * time.Second
)

var (
	groups      = []string{"g0", "g1", "g2", "g3"} // of qFIFO
	pubGroups   = []string{"p0", "p1"}             // of the FIFO topic
	queryGroups = []string{"q0", "q1"}             // of qQFIFO
)

// stats are the acknowledged calls, for the report.
type stats struct {
	sends, receives, deletes, visChanges, publishes, resends atomic.Int64
	carriedDeletes, carriedOK                                atomic.Int64 // with handles from before a restart
	resumed                                                  atomic.Int64 // HTTP deliveries pending at a kill, done after it
	replays                                                  atomic.Int64 // cut-off FIFO receives retried with their attempt id

	querySends, queryReceives, queryDeletes atomic.Int64 // over the Query protocol
	queryFIFOSends, queryVisChanges         atomic.Int64 // over the Query protocol: to qQFIFO; visibility changes (of qQFIFO)
	pubBatches, pubBatchEntries             atomic.Int64 // acknowledged PublishBatch calls to the FIFO topic; their published entries
	pubBatchesWithDupes, pubBatchDupes      atomic.Int64 // of those, the ones with an entry repeating another's deduplication id; those entries, answered as published
	dupResends, cutDupRetries, lateDupes    atomic.Int64 // duplicates published again after a restart, answered as published; of them, in the retry of a PublishBatch the kill cut off; alone, of older publishes
	queryVisBatches, queryVisBatchEntries   atomic.Int64 // acknowledged ChangeMessageVisibilityBatch calls over the Query protocol; their changed entries
	queryVisParked                          atomic.Int64 // of those entries, the ones left in flight, checked to stay so across restarts and clock moves
	queryResends, pubBatchResends           atomic.Int64 // FIFO resends after a crash to qQFIFO; to the FIFO topic with PublishBatch
	ns2Sends, fifoPublishes                 atomic.Int64 // to the second namespace; to the FIFO topic
	redriveSends, taskStarts, tasksResumed  atomic.Int64 // to qSrc; move tasks; running at a restart and finished after it
	deadLettered                            atomic.Int64 // seen in qDLQ at a checkpoint
	killsInSnapshot, compactions            atomic.Int64 // kills that cut a snapshot off; cycles whose kill found a newer snapshot
	killsInDupBatch                         atomic.Int64 // kills made while a PublishBatch with a duplicate entry was in flight
}

// harness runs the clients and the checks of one crash loop.
type harness struct {
	l        *ledger
	v        *violations
	sqs      *sqs.Client
	sqs2     *sqs.Client // the second namespace's
	query    *queryClient
	sns      *sns.Client
	tr       *http.Transport
	hook     *hook
	urls     map[string]string // by ledger name
	arns     map[string]string
	topicARN string
	fifoARN  string // the FIFO topic's
	seed     uint64
	next     atomic.Int64 // unique body numbers
	lastSnap uint64       // the number of the newest snapshot at the last kill
	st       stats

	// dupBatches counts the PublishBatch calls with a duplicate entry
	// in flight; batchRetry is set when the kill came during one.
	dupBatches atomic.Int32
	batchRetry bool

	errMu sync.Mutex
	errs  map[string]int // errors fanout answered, by action and code: not violations, but shown
}

func newHarness(url string, hk *hook, seed uint64) *harness {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	cfg := sdktest.Config()
	cfg.HTTPClient = sdktest.HTTPClientWith(tr)
	// One HTTP attempt per call: a retry after a reset connection would
	// blur which attempt happened.
	cfg.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
	cfg2 := cfg.Copy()
	cfg2.Region, cfg2.Credentials = region2, credentials.NewStaticCredentialsProvider(account2, "secret", "")
	v := newViolations()
	return &harness{
		l: newLedger(v), v: v, tr: tr, hook: hk, seed: seed, urls: map[string]string{}, arns: map[string]string{}, errs: map[string]int{},
		sqs:   sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) }),
		sqs2:  sqs.NewFromConfig(cfg2, func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) }),
		query: &queryClient{hc: cfg.HTTPClient.(*http.Client), endpoint: url},
		sns:   sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(url) }),
	}
}

// client is the SDK client of queue's namespace.
func (h *harness) client(queue string) *sqs.Client {
	if _, account, _ := nameOf(queue); account != "" {
		return h.sqs2
	}
	return h.sqs
}

// answered reports whether fanout answered the failed call (with an AWS
// error, whose code it returns) rather than the connection failing.
func answered(err error) (string, bool) {
	var qe *queryError
	if errors.As(err, &qe) {
		return qe.code, true
	}
	var re *awshttp.ResponseError
	var ae smithy.APIError
	if !errors.As(err, &re) || re.HTTPStatusCode() == 0 || !errors.As(err, &ae) {
		return "", false // a reply cut short by the kill is not an answer
	}
	return ae.ErrorCode(), true
}

func (h *harness) noteErr(action, code string) {
	h.errMu.Lock()
	defer h.errMu.Unlock()
	h.errs[action+" "+code]++
}

func (h *harness) body(prefix string) string {
	return prefix + "/" + strconv.FormatInt(h.next.Add(1), 10)
}

// setup creates the queues, the topics and their subscriptions, once.
func (h *harness) setup(ctx context.Context) error {
	for _, q := range append(queues, qDLQ, qSrc) {
		if err := h.createQueue(ctx, q); err != nil {
			return err
		}
	}
	ft, err := h.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(topic2), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		return fmt.Errorf("CreateTopic %s: %w", topic2, err)
	}
	h.fifoARN = *ft.TopicArn
	if _, err := h.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: ft.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String(h.arns[qFanFIFO]), Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		return fmt.Errorf("Subscribe %s: %w", qFanFIFO, err)
	}
	t, err := h.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(topic)})
	if err != nil {
		return fmt.Errorf("CreateTopic: %w", err)
	}
	h.topicARN = *t.TopicArn
	for q, raw := range map[string]string{qFanRaw: "true", qFanEnv: "false"} {
		if _, err := h.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: t.TopicArn, Protocol: aws.String("sqs"),
			Endpoint: aws.String(h.arns[q]), Attributes: map[string]string{"RawMessageDelivery": raw}}); err != nil {
			return fmt.Errorf("Subscribe %s: %w", q, err)
		}
	}
	// Retries 1 to 2 s apart, many of them: each message fails at most
	// twice, so every one is delivered if fanout keeps its retries.
	policy := `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":2,"numRetries":40,"numNoDelayRetries":0,"numMinDelayRetries":0,"numMaxDelayRetries":0,"backoffFunction":"linear"}}`
	if _, err := h.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: t.TopicArn, Protocol: aws.String("http"),
		Endpoint: aws.String(h.hook.srv.URL + "/sns"), Attributes: map[string]string{"DeliveryPolicy": policy}}); err != nil {
		return fmt.Errorf("Subscribe http: %w", err)
	}
	select {
	case <-h.hook.confirmed:
		return nil
	case <-time.After(20 * time.Second):
		return errors.New("the HTTP subscription was not confirmed within 20 s")
	}
}

func (h *harness) createQueue(ctx context.Context, q string) error {
	attrs := map[string]string{"MessageRetentionPeriod": "1209600"}
	if isFIFO(q) {
		attrs["FifoQueue"] = "true"
	}
	if q == qSrc {
		// No visibility timeout: each receive makes a message visible
		// again, so its third one moves it to qDLQ at once.
		attrs["VisibilityTimeout"] = "0"
		attrs["RedrivePolicy"] = `{"deadLetterTargetArn":"` + h.arns[qDLQ] + `","maxReceiveCount":2}`
	}
	name, _, _ := nameOf(q)
	c := h.client(q)
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return fmt.Errorf("CreateQueue %s: %w", q, err)
	}
	h.urls[q] = *out.QueueUrl
	a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return fmt.Errorf("GetQueueAttributes %s: %w", q, err)
	}
	h.arns[q] = a.Attributes["QueueArn"]
	return nil
}

// checkTopology checks that the queues and subscriptions survived, and
// returns the queues that did not (created again, empty, for the loop to
// go on).
func (h *harness) checkTopology(ctx context.Context) (lost map[string]bool, err error) {
	lost = map[string]bool{}
	for _, q := range append(queues, qDLQ, qSrc) {
		name, _, _ := nameOf(q)
		if _, err := h.client(q).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)}); err != nil {
			h.v.add(h.l.cycle, invTopology, q, "GetQueueUrl: %v", err)
			lost[q] = true
			if err := h.createQueue(ctx, q); err != nil {
				return nil, err
			}
		}
	}
	out, err := h.sns.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(h.topicARN)})
	if err != nil {
		h.v.add(h.l.cycle, invTopology, topic, "ListSubscriptionsByTopic: %v", err)
		return lost, nil
	}
	confirmed := 0
	for _, s := range out.Subscriptions {
		if *s.SubscriptionArn != "PendingConfirmation" {
			confirmed++
		}
	}
	if confirmed != 3 {
		h.v.add(h.l.cycle, invTopology, topic+" subscriptions", "%d confirmed subscriptions after a restart, want 3 (%d listed)", confirmed, len(out.Subscriptions))
	}
	if out, err = h.sns.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(h.fifoARN)}); err != nil || len(out.Subscriptions) != 1 {
		h.v.add(h.l.cycle, invTopology, topic2+" subscriptions", "ListSubscriptionsByTopic after a restart: %v, %v", err, out)
	}
	return lost, nil
}

// call bounds one client call: a hung call is reported, not waited for.
func call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 20*time.Second)
}

// workers is one run's client goroutines.
type workers struct {
	h          *harness
	ctx        context.Context
	del, vis   chan *hnd // handles to delete, to change the visibility of
	qdel, qvis chan *hnd // the same, of qQFIFO: over the Query protocol
	wg         sync.WaitGroup
	cycle      int
}

func (w *workers) spawn(n int, f func(rnd *rand.Rand)) {
	rnd := rand.New(rand.NewPCG(w.h.seed, uint64(w.cycle)<<16|uint64(n)))
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f(rnd)
	}()
}

// pause waits d or until the run ends, and reports whether it is still on.
func (w *workers) pause(d time.Duration) bool {
	select {
	case <-w.ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// stdSender sends to a standard queue, one at a time or in batches, some
// with a delay, while the queue holds few enough to peek at; with query,
// over the Query protocol.
func (w *workers) stdSender(queue string, query bool, limit int) func(*rand.Rand) {
	return func(rnd *rand.Rand) { w.sendStd(rnd, queue, query, limit) }
}

func (w *workers) sendStd(rnd *rand.Rand, queue string, query bool, limit int) {
	h := w.h
	prefix := "std"
	switch {
	case query:
		prefix = "query"
	case queue != qStd:
		prefix = "ns2"
	}
	for w.ctx.Err() == nil {
		if h.l.outstanding(queue) > limit {
			if !w.pause(20 * time.Millisecond) {
				return
			}
			continue
		}
		delay := int32(0)
		if rnd.IntN(5) == 0 {
			delay = int32(1 + rnd.IntN(3))
		}
		if rnd.IntN(3) > 0 {
			m := h.l.attempt(queue, h.body(prefix), "", 0)
			start := time.Now()
			ctx, cancel := call(w.ctx)
			var id string
			var err error
			if query {
				id, _, err = h.query.send(ctx, h.urls[queue], m.key, delay, "", "")
			} else {
				var out *sqs.SendMessageOutput
				if out, err = h.client(queue).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.urls[queue]), MessageBody: aws.String(m.key), DelaySeconds: delay}); err == nil {
					id = *out.MessageId
				}
			}
			cancel()
			if err != nil {
				if !w.failed("SendMessage", err, true, []*msg{m}) {
					return
				}
				continue
			}
			h.l.delayed(m, start, delay)
			h.l.acked(m, id, "")
			h.sent(queue, query, 1)
			continue
		}
		n := 2 + rnd.IntN(9)
		ms := make([]*msg, n)
		entries := make([]types.SendMessageBatchRequestEntry, n)
		for i := range ms {
			ms[i] = h.l.attempt(queue, h.body(prefix), "", 0)
			entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(ms[i].key), DelaySeconds: delay * int32(i%2)}
		}
		start := time.Now()
		ctx, cancel := call(w.ctx)
		ok, failed, err := h.sendBatch(ctx, queue, entries, query)
		cancel()
		if err != nil {
			if !w.failed("SendMessageBatch", err, true, ms) {
				return
			}
			continue
		}
		for _, s := range ok {
			h.l.delayed(ms[s.i], start, delay*int32(s.i%2))
			h.l.acked(ms[s.i], s.id, "")
			h.sent(queue, query, 1)
		}
		for _, f := range failed {
			h.noteErr("SendMessageBatch entry", f.code)
		}
	}
}

// sendBatch calls SendMessageBatch (with query, over the Query protocol).
func (h *harness) sendBatch(ctx context.Context, queue string, entries []types.SendMessageBatchRequestEntry, query bool) ([]batchOK, []batchFailed, error) {
	if query {
		return h.query.sendBatch(ctx, h.urls[queue], entries)
	}
	out, err := h.client(queue).SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(h.urls[queue]), Entries: entries})
	if err != nil {
		return nil, nil, err
	}
	ok, failed := sdkBatch(out.Successful, out.Failed)
	return ok, failed, nil
}

// sent counts acknowledged sends to a standard queue.
func (h *harness) sent(queue string, query bool, n int64) {
	h.st.sends.Add(n)
	switch {
	case query:
		h.st.querySends.Add(n)
	case queue == qStd2:
		h.st.ns2Sends.Add(n)
	case queue == qSrc:
		h.st.redriveSends.Add(n)
	}
}

// batchOK and batchFailed are a batch call's entries, by their index.
type batchOK struct {
	i       int
	id, seq string
}

type batchFailed struct {
	i    int
	code string
}

func sdkBatch(ok []types.SendMessageBatchResultEntry, failed []types.BatchResultErrorEntry) ([]batchOK, []batchFailed) {
	o := make([]batchOK, len(ok))
	for k, s := range ok {
		o[k].i, _ = strconv.Atoi(*s.Id)
		o[k].id, o[k].seq = *s.MessageId, aws.ToString(s.SequenceNumber)
	}
	return o, sdkFailed(failed)
}

func sdkFailed(failed []types.BatchResultErrorEntry) []batchFailed {
	f := make([]batchFailed, len(failed))
	for k, e := range failed {
		f[k].i, _ = strconv.Atoi(*e.Id)
		f[k].code = *e.Code
	}
	return f
}

// failed handles a failed call: one fanout answered is noted (and the run
// goes on); a broken connection means fanout was killed, so the call's
// outcome is unknown and the worker stops. ms are the messages the call
// sent or deleted (send tells which), recorded as unanswered either way.
func (w *workers) failed(action string, err error, send bool, ms []*msg) bool {
	if len(ms) > 0 {
		w.h.l.unanswered(send, ms)
	}
	code, ok := answered(err)
	if !ok {
		if w.ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			w.h.noteErr(action, "hung for 20 s")
		}
		return false
	}
	w.h.noteErr(action, code)
	return true
}

// fifoSender sends one group's bodies to a FIFO queue in counter order,
// alone or in batches (with query, over the Query protocol), while the
// queue holds at most limit; the body is the deduplication id.
func (w *workers) fifoSender(queue, group string, query bool, limit int) func(*rand.Rand) {
	return func(rnd *rand.Rand) {
		h := w.h
		for w.ctx.Err() == nil {
			if h.l.outstanding(queue) > limit {
				if !w.pause(20 * time.Millisecond) {
					return
				}
				continue
			}
			n := 1
			if rnd.IntN(2) == 0 {
				n = 2 + rnd.IntN(4)
			}
			ms := h.l.nextInGroup(queue, group, n)
			if len(ms) == 1 {
				ctx, cancel := call(w.ctx)
				id, seq, err := h.sendFIFO(ctx, ms[0], query)
				cancel()
				if err != nil {
					w.failed("SendMessage FIFO", err, true, ms)
					return // the rest of the group waits for the resend after the restart
				}
				h.l.acked(ms[0], id, seq)
				h.fifoSent(query, 1)
				continue
			}
			entries := make([]types.SendMessageBatchRequestEntry, len(ms))
			for i, m := range ms {
				entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(m.key),
					MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(m.key)}
			}
			ctx, cancel := call(w.ctx)
			ok, failed, err := h.sendBatch(ctx, queue, entries, query)
			cancel()
			if err != nil {
				w.failed("SendMessageBatch FIFO", err, true, ms)
				return
			}
			sort.Slice(ok, func(i, j int) bool { return ok[i].i < ok[j].i })
			for _, s := range ok {
				h.l.acked(ms[s.i], s.id, s.seq)
				h.fifoSent(query, 1)
			}
			if len(failed) > 0 {
				for _, f := range failed {
					h.noteErr("SendMessageBatch FIFO entry", f.code)
					h.l.unanswered(true, ms[f.i:f.i+1])
				}
				return
			}
		}
	}
}

// sendFIFO sends m alone, with its key as its deduplication id (with
// query, over the Query protocol), and returns its MessageId and
// SequenceNumber.
func (h *harness) sendFIFO(ctx context.Context, m *msg, query bool) (id, seq string, err error) {
	if query {
		return h.query.send(ctx, h.urls[m.queue], m.key, 0, m.group, m.key)
	}
	out, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.urls[m.queue]), MessageBody: aws.String(m.key),
		MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.key)})
	if err != nil {
		return "", "", err
	}
	return *out.MessageId, aws.ToString(out.SequenceNumber), nil
}

// fifoSent counts acknowledged sends to a FIFO queue.
func (h *harness) fifoSent(query bool, n int64) {
	h.st.sends.Add(n)
	if query {
		h.st.querySends.Add(n)
		h.st.queryFIFOSends.Add(n)
	}
}

// receiver receives from queue (with query, over the Query protocol) and
// hands each message to a deleter, a visibility changer, or holds it (its
// handle is then used after the restart, at the checkpoint).
func (w *workers) receiver(queue string, vis time.Duration, hold int, query bool) func(*rand.Rand) {
	return func(rnd *rand.Rand) {
		h := w.h
		del, change := w.handoff(queue, query)
		for w.ctx.Err() == nil {
			attempt := ""
			if retried(queue) {
				attempt = h.body("attempt")
			}
			ctx, cancel := call(w.ctx)
			got, err := h.receive(ctx, queue, vis, 1, attempt, query)
			cancel()
			if err != nil {
				if !w.failed("ReceiveMessage", err, false, nil) {
					if attempt != "" {
						h.l.lostReceive(queue, attempt)
					}
					return
				}
				continue
			}
			for _, hd := range h.l.receive(queue, got, vis) {
				if hd == nil {
					continue
				}
				switch r := rnd.IntN(100); {
				case r < hold:
				case r < hold+25:
					change <- hd
				default:
					del <- hd
				}
			}
		}
	}
}

// handoff is where queue's receiver hands its handles: qQFIFO's go to the
// deleter and visibility changer that speak only the Query protocol, and
// the other Query receiver's visibility changes go over Query too.
func (w *workers) handoff(queue string, query bool) (del, vis chan *hnd) {
	switch {
	case queue == qQFIFO:
		return w.qdel, w.qvis
	case query:
		return w.del, w.qvis
	}
	return w.del, w.vis
}

// receive calls ReceiveMessage, waiting up to wait seconds (with query,
// over the Query protocol; with an attempt, a FIFO receive's
// ReceiveRequestAttemptId).
func (h *harness) receive(ctx context.Context, queue string, vis time.Duration, wait int32, attempt string, query bool) ([]received, error) {
	var got []received
	if query {
		var err error
		if got, err = h.query.receive(ctx, h.urls[queue], vis, wait, attempt); err != nil {
			return nil, err
		}
		h.st.queryReceives.Add(int64(len(got)))
	} else {
		var id *string
		if attempt != "" {
			id = aws.String(attempt)
		}
		out, err := h.client(queue).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(h.urls[queue]), MaxNumberOfMessages: 10,
			WaitTimeSeconds: wait, VisibilityTimeout: int32(vis / time.Second), ReceiveRequestAttemptId: id,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			return nil, err
		}
		got = make([]received, len(out.Messages))
		for i, m := range out.Messages {
			n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
			got[i] = received{id: *m.MessageId, body: *m.Body, rh: *m.ReceiptHandle, count: n,
				seq: m.Attributes["SequenceNumber"], group: m.Attributes["MessageGroupId"]}
		}
	}
	h.st.receives.Add(int64(len(got)))
	return got, nil
}

// deleter deletes what it is handed on ch, alone or in batches; with
// query, those of the default namespace over the Query protocol.
func (w *workers) deleter(ch chan *hnd, query bool) func(*rand.Rand) {
	return func(rnd *rand.Rand) { w.deleteHanded(rnd, ch, query) }
}

func (w *workers) deleteHanded(rnd *rand.Rand, ch chan *hnd, query bool) {
	for {
		var first *hnd
		select {
		case <-w.ctx.Done():
			return
		case first = <-ch:
		}
		byQueue := map[string][]*hnd{first.m.queue: {first}}
	more:
		for range 9 {
			select {
			case hd := <-ch:
				byQueue[hd.m.queue] = append(byQueue[hd.m.queue], hd)
			default:
				break more
			}
		}
		for q, hs := range byQueue {
			ok := true
			qry := query && q != qStd2
			if len(hs) > 1 && rnd.IntN(2) == 0 {
				ok = w.h.deleteBatch(w.ctx, q, hs, qry)
			} else {
				for _, hd := range hs {
					if ok = w.h.deleteOne(w.ctx, hd, qry); !ok {
						break
					}
				}
			}
			if !ok {
				return
			}
		}
	}
}

// deleteOne deletes hd's message (with query, over the Query protocol);
// false when the connection failed.
func (h *harness) deleteOne(ctx context.Context, hd *hnd, query bool) bool {
	h.l.deleting([]*hnd{hd})
	c, cancel := call(ctx)
	var err error
	if query {
		err = h.query.delete(c, h.urls[hd.m.queue], hd.rh)
	} else {
		_, err = h.client(hd.m.queue).DeleteMessage(c, &sqs.DeleteMessageInput{QueueUrl: aws.String(h.urls[hd.m.queue]), ReceiptHandle: aws.String(hd.rh)})
	}
	cancel()
	if err != nil {
		code, ok := answered(err)
		if !ok {
			return false // unknown: the handle stays, for the checkpoint
		}
		h.noteErr("DeleteMessage", code)
		h.l.refused(hd, "DeleteMessage", code, false)
		return true
	}
	h.l.deleted(hd)
	h.deletedN(query, 1)
	return true
}

func (h *harness) deletedN(query bool, n int64) {
	h.st.deletes.Add(n)
	if query {
		h.st.queryDeletes.Add(n)
	}
}

// deleteBatch deletes hs (of one queue) in one call (with query, over the
// Query protocol); false when the connection failed.
func (h *harness) deleteBatch(ctx context.Context, queue string, hs []*hnd, query bool) bool {
	h.l.deleting(hs)
	entries := make([]types.DeleteMessageBatchRequestEntry, len(hs))
	for i, hd := range hs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(hd.rh)}
	}
	c, cancel := call(ctx)
	var ok []int
	var failed []batchFailed
	var err error
	if query {
		ok, failed, err = h.query.deleteBatch(c, h.urls[queue], entries)
	} else {
		var out *sqs.DeleteMessageBatchOutput
		if out, err = h.client(queue).DeleteMessageBatch(c, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(h.urls[queue]), Entries: entries}); err == nil {
			for _, s := range out.Successful {
				i, _ := strconv.Atoi(*s.Id)
				ok = append(ok, i)
			}
			failed = sdkFailed(out.Failed)
		}
	}
	cancel()
	if err != nil {
		ms := make([]*msg, len(hs))
		for i, hd := range hs {
			ms[i] = hd.m
		}
		h.l.unanswered(false, ms)
		code, ok := answered(err)
		if ok {
			h.noteErr("DeleteMessageBatch", code)
		}
		return ok
	}
	for _, i := range ok {
		h.l.deleted(hs[i])
		h.deletedN(query, 1)
	}
	for _, f := range failed {
		h.noteErr("DeleteMessageBatch entry", f.code)
		h.l.refused(hs[f.i], "DeleteMessageBatch", f.code, false)
	}
	return true
}

// visChanger makes most messages it is handed on ch visible again (so
// they are received again, with a higher receive count) and extends the
// others' timeouts, then hands them to a deleter on del; with query, over
// the Query protocol, where it takes up to ten at a time and changes those
// of one queue alone or, half the time, with ChangeMessageVisibilityBatch.
func (w *workers) visChanger(ch, del chan *hnd, query bool) func(*rand.Rand) {
	return func(rnd *rand.Rand) { w.changeHanded(rnd, ch, del, query) }
}

func (w *workers) changeHanded(rnd *rand.Rand, ch, del chan *hnd, query bool) {
	for {
		var first *hnd
		select {
		case <-w.ctx.Done():
			return
		case first = <-ch:
		}
		if !query {
			if !w.changeOne(rnd, first, del, false) {
				return
			}
			continue
		}
		for _, hs := range gatherByQueue(first, ch) {
			if len(hs) > 1 && rnd.IntN(2) == 0 {
				if !w.changeBatch(rnd, hs, del) {
					return
				}
				continue
			}
			for _, hd := range hs {
				if !w.changeOne(rnd, hd, del, true) {
					return
				}
			}
		}
	}
}

// gatherByQueue groups first and up to nine more handles waiting on ch by queue,
// in the order their queues came.
func gatherByQueue(first *hnd, ch chan *hnd) [][]*hnd {
	out := [][]*hnd{{first}}
	at := map[string]int{first.m.queue: 0}
	for range 9 {
		select {
		case hd := <-ch:
			i, ok := at[hd.m.queue]
			if !ok {
				i = len(out)
				at[hd.m.queue] = i
				out = append(out, nil)
			}
			out[i] = append(out[i], hd)
		default:
			return out
		}
	}
	return out
}

// newVisibility is the timeout a visibility changer asks for: none
// (visible again) most of the time, else 90 s.
func newVisibility(rnd *rand.Rand) time.Duration {
	if rnd.IntN(10) < 3 {
		return 90 * time.Second
	}
	return 0
}

// changeOne changes hd's visibility (with query, over the Query protocol);
// false when the connection failed.
func (w *workers) changeOne(rnd *rand.Rand, hd *hnd, del chan *hnd, query bool) bool {
	h := w.h
	vis := newVisibility(rnd)
	h.l.changing(hd)
	ctx, cancel := call(w.ctx)
	var err error
	if query {
		err = h.query.changeVisibility(ctx, h.urls[hd.m.queue], hd.rh, vis)
	} else {
		_, err = h.client(hd.m.queue).ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(h.urls[hd.m.queue]),
			ReceiptHandle: aws.String(hd.rh), VisibilityTimeout: int32(vis / time.Second)})
	}
	cancel()
	if err != nil {
		code, ok := answered(err)
		if !ok {
			h.l.forget(hd) // released or not: the handle may be stale now
			return false
		}
		h.noteErr("ChangeMessageVisibility", code)
		h.l.refused(hd, "ChangeMessageVisibility", code, true)
		return true
	}
	h.visChanged(hd, vis, del, query)
	return true
}

// visChanged records an acknowledged visibility change of hd to vis and
// hands a message still in flight to a deleter.
func (h *harness) visChanged(hd *hnd, vis time.Duration, del chan *hnd, query bool) {
	h.l.changed(hd, vis)
	h.st.visChanges.Add(1)
	if query {
		h.st.queryVisChanges.Add(1)
	}
	if vis > 0 {
		del <- hd
	}
}

// parking chooses, for a message of queue a batch change gives a timeout,
// whether it is left in flight for it, and the timeout then: half those of
// the standard queue, for their 90 s; one in eight of qQFIFO's, for 45 s,
// as each holds its group that long (a checkpoint and a half of fanout's
// clock; a lost change would end with the receive's 20 s, before the end
// of the first checkpoint's move).
func parking(rnd *rand.Rand, queue string, vis time.Duration) (bool, time.Duration) {
	switch {
	case vis == 0:
	case queue == qStd:
		return rnd.IntN(2) == 0, vis
	case queue == qQFIFO && rnd.IntN(8) == 0:
		return true, 45 * time.Second
	}
	return false, vis
}

// changeBatch changes the visibility of hs (of one queue, each its own
// timeout) with one ChangeMessageVisibilityBatch over the Query protocol.
// Each entry is acknowledged alone; a call whose reply the kill cut off
// leaves every one unknown. False when the connection failed.
func (w *workers) changeBatch(rnd *rand.Rand, hs []*hnd, del chan *hnd) bool {
	h := w.h
	entries := make([]visChange, len(hs))
	park := make([]bool, len(hs))
	for i, hd := range hs {
		entries[i] = visChange{handle: hd.rh}
		park[i], entries[i].vis = parking(rnd, hd.m.queue, newVisibility(rnd))
		h.l.changing(hd)
	}
	sent := time.Now()
	ctx, cancel := call(w.ctx)
	ok, failed, err := h.query.changeVisibilityBatch(ctx, h.urls[hs[0].m.queue], entries)
	cancel()
	if err != nil {
		code, answer := answered(err)
		for _, hd := range hs {
			if !answer {
				h.l.forget(hd)
				continue
			}
			h.l.refused(hd, "ChangeMessageVisibilityBatch", code, true)
		}
		if answer {
			h.noteErr("ChangeMessageVisibilityBatch", code)
		}
		return answer
	}
	for _, i := range ok {
		h.st.queryVisBatchEntries.Add(1)
		if park[i] {
			// Left in flight, its handle unused: it must stay so
			// for its whole timeout, across restarts and clock moves.
			h.l.park(hs[i], sent, entries[i].vis)
			h.st.visChanges.Add(1)
			h.st.queryVisChanges.Add(1)
			h.st.queryVisParked.Add(1)
			continue
		}
		h.visChanged(hs[i], entries[i].vis, del, true)
	}
	for _, f := range failed {
		h.noteErr("ChangeMessageVisibilityBatch entry", f.code)
		h.l.refused(hs[f.i], "ChangeMessageVisibilityBatch", f.code, true)
	}
	h.st.queryVisBatches.Add(1)
	return true
}

// publisher publishes to the topic (two SQS subscriptions and the HTTP
// one), a few dozen times a run.
func (w *workers) publisher(rnd *rand.Rand) {
	h := w.h
	for range 30 {
		if !w.pause(time.Duration(10+rnd.IntN(40)) * time.Millisecond) {
			return
		}
		// Long enough for the raw queue to keep a reference to the
		// publish's one stored body (sqs.SharedBody), not a copy.
		p := h.l.publishing(h.body("pub") + "/" + strings.Repeat("p", 300))
		ctx, cancel := call(w.ctx)
		out, err := h.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(h.topicARN), Message: aws.String(p.body)})
		cancel()
		if err != nil {
			if !w.failed("Publish", err, false, nil) {
				return
			}
			continue
		}
		h.l.published(p, *out.MessageId)
		h.st.publishes.Add(1)
	}
}

// fifoPublisher publishes one group's bodies to the FIFO topic in counter
// order, each its own deduplication id, alone or with PublishBatch; the
// topic delivers them to qFanFIFO before it answers.
func (w *workers) fifoPublisher(group string) func(*rand.Rand) {
	return func(rnd *rand.Rand) {
		h := w.h
		for w.ctx.Err() == nil {
			if h.l.outstanding(qFanFIFO) > 150 {
				if !w.pause(20 * time.Millisecond) {
					return
				}
				continue
			}
			if !w.pause(time.Duration(rnd.IntN(8)) * time.Millisecond) {
				return
			}
			if rnd.IntN(3) == 0 {
				if !w.publishBatch(rnd, h.l.nextInGroup(qFanFIFO, group, 2+rnd.IntN(4))) {
					return
				}
				continue
			}
			ms := h.l.nextInGroup(qFanFIFO, group, 1)
			ctx, cancel := call(w.ctx)
			_, err := h.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(h.fifoARN), Message: aws.String(ms[0].key),
				MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(ms[0].key)})
			cancel()
			if err != nil {
				w.failed("Publish FIFO", err, true, ms)
				return // the rest of the group waits for the resend after the restart
			}
			h.l.acked(ms[0], "", "")
			h.st.fifoPublishes.Add(1)
		}
	}
}

// publishBatch publishes ms (of one group, in counter order) to the FIFO
// topic in one PublishBatch, and reports whether every entry was
// published. Each entry is acknowledged alone: only the Successful ones
// are sent; a failed entry, or a call whose reply the kill cut off, leaves
// its entries unanswered, to be published again after the restart. They
// are not a batch to the ledger: AWS does not say a PublishBatch is all or
// nothing, and fanout delivers its entries one after another, so a kill may
// leave the first ones delivered; the group's order still holds, and the
// resend of the rest must not duplicate them. Half the batches carry, right
// after one entry, a second entry with its deduplication id and another
// body: AWS deduplicates within a batch too, so that entry is answered as
// published and never delivered.
func (w *workers) publishBatch(rnd *rand.Rand, ms []*msg) bool {
	h := w.h
	if rnd.IntN(2) == 0 {
		h.l.duplicated(ms[rnd.IntN(len(ms))])
	}
	entries, dups := h.l.fifoEntries(ms)
	if dups > 0 {
		h.dupBatches.Add(1)
	}
	ctx, cancel := call(w.ctx)
	out, err := h.sns.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(h.fifoARN), PublishBatchRequestEntries: entries})
	cancel()
	if dups > 0 {
		h.dupBatches.Add(-1)
	}
	if err != nil {
		for _, m := range ms {
			h.l.unanswered(true, []*msg{m})
		}
		w.failed("PublishBatch FIFO", err, true, nil)
		return false
	}
	done := make([]bool, len(ms))
	for _, s := range out.Successful {
		if _, dup := dupEntry(*s.Id, ms); dup {
			h.st.pubBatchDupes.Add(1)
			continue
		}
		i, _ := strconv.Atoi(*s.Id)
		done[i] = true
	}
	for _, f := range out.Failed {
		h.refusedEntry("PublishBatch FIFO entry", *f.Id, *f.Code, ms)
	}
	for i, m := range ms {
		if !done[i] {
			h.l.unanswered(true, []*msg{m})
			continue
		}
		h.l.acked(m, "", "")
		h.st.fifoPublishes.Add(1)
		h.st.pubBatchEntries.Add(1)
	}
	h.st.pubBatches.Add(1)
	if dups > 0 {
		h.st.pubBatchesWithDupes.Add(1)
	}
	return len(out.Failed) == 0
}

// refusedEntry notes a PublishBatch entry fanout answered as failed: for
// a duplicate's, a violation too (AWS accepts a duplicate as published).
func (h *harness) refusedEntry(action, id, code string, ms []*msg) {
	h.noteErr(action, code)
	if m, dup := dupEntry(id, ms); dup {
		h.l.mu.Lock()
		h.l.violate(invDupEntry, m, "%s: its duplicate's entry failed with %s; AWS accepts a duplicate as published, and drops it", action, code)
		h.l.mu.Unlock()
	}
}

// fifoEntries are PublishBatch entries for ms, each with its key as its
// body and deduplication id, and its index as its Id; a message with
// dupAfter is followed by its duplicate, of Id "d" and its index. It
// returns how many duplicates it added.
func (l *ledger) fifoEntries(ms []*msg) ([]snstypes.PublishBatchRequestEntry, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	es := make([]snstypes.PublishBatchRequestEntry, 0, len(ms)+2)
	dups := 0
	for i, m := range ms {
		es = append(es, snstypes.PublishBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), Message: aws.String(m.key),
			MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.key)})
		if m.dupAfter {
			es = append(es, dupEntryOf(m, "d"+strconv.Itoa(i)))
			dups++
		}
	}
	return es, dups
}

// dupEntryOf is a PublishBatch entry that repeats m's deduplication id.
func dupEntryOf(m *msg, id string) snstypes.PublishBatchRequestEntry {
	return snstypes.PublishBatchRequestEntry{Id: aws.String(id), Message: aws.String(m.key + dupSuffix),
		MessageGroupId: aws.String(m.group), MessageDeduplicationId: aws.String(m.key)}
}

// dupEntry reports whether a PublishBatch entry Id is a duplicate's, and
// of which of ms.
func dupEntry(id string, ms []*msg) (*msg, bool) {
	rest, ok := strings.CutPrefix(id, "d")
	if !ok {
		return nil, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= len(ms) {
		return nil, false
	}
	return ms[i], true
}

// redriver works qSrc and its dead-letter queue: it sends to qSrc and
// receives from it without deleting (no visibility timeout, so a message's
// third receive moves it to qDLQ), starts move tasks that send qDLQ's
// messages back, 5 a second (so that one is running at most kills), and
// deletes some of those that came back.
func (w *workers) redriver(rnd *rand.Rand) {
	h := w.h
	for w.ctx.Err() == nil {
		if h.l.outstanding(qSrc) < 60 {
			m := h.l.attempt(qSrc, h.body("redrive"), "", 0)
			ctx, cancel := call(w.ctx)
			out, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.urls[qSrc]), MessageBody: aws.String(m.key)})
			cancel()
			if err != nil {
				if !w.failed("SendMessage", err, true, []*msg{m}) {
					return
				}
				continue
			}
			h.l.acked(m, *out.MessageId, "")
			h.sent(qSrc, false, 1)
		}
		ctx, cancel := call(w.ctx)
		got, err := h.receive(ctx, qSrc, 0, 1, "", false)
		cancel()
		if err != nil {
			if !w.failed("ReceiveMessage", err, false, nil) {
				return
			}
			continue
		}
		for _, hd := range h.l.receive(qSrc, got, 0) {
			if hd != nil && h.l.cameBack(hd.m) && rnd.IntN(2) == 0 && !h.deleteOne(w.ctx, hd, false) {
				return
			}
		}
		if rnd.IntN(4) > 0 {
			continue
		}
		ctx, cancel = call(w.ctx)
		_, err = h.sqs.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.arns[qDLQ]), MaxNumberOfMessagesPerSecond: aws.Int32(5)})
		cancel()
		if err != nil {
			code, ok := answered(err)
			if !ok {
				return // started or not: the checkpoint's listing tells
			}
			if code != "InvalidParameterValue" { // a task is running: the usual answer
				h.noteErr("StartMessageMoveTask", code)
			}
			continue
		}
		h.l.taskStarted()
		h.st.taskStarts.Add(1)
	}
}
