package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sns"
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

var groups = []string{"g0", "g1", "g2", "g3"}

// stats are the acknowledged calls, for the report.
type stats struct {
	sends, receives, deletes, visChanges, publishes, resends atomic.Int64
	carriedDeletes, carriedOK                                atomic.Int64 // with handles from before a restart
	resumed                                                  atomic.Int64 // HTTP deliveries pending at a kill, done after it
	replays                                                  atomic.Int64 // cut-off FIFO receives retried with their attempt id
}

// harness runs the clients and the checks of one crash loop.
type harness struct {
	l        *ledger
	v        *violations
	sqs      *sqs.Client
	sns      *sns.Client
	tr       *http.Transport
	hook     *hook
	urls     map[string]string
	topicARN string
	seed     uint64
	next     atomic.Int64 // unique body numbers
	st       stats

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
	v := newViolations()
	return &harness{
		l: newLedger(v), v: v, tr: tr, hook: hk, seed: seed, urls: map[string]string{}, errs: map[string]int{},
		sqs: sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) }),
		sns: sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(url) }),
	}
}

// answered reports whether fanout answered the failed call (with an AWS
// error, whose code it returns) rather than the connection failing.
func answered(err error) (string, bool) {
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

// setup creates the queues, the topic and its subscriptions, once.
func (h *harness) setup(ctx context.Context) error {
	for _, q := range queues {
		if err := h.createQueue(ctx, q); err != nil {
			return err
		}
	}
	t, err := h.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(topic)})
	if err != nil {
		return fmt.Errorf("CreateTopic: %w", err)
	}
	h.topicARN = *t.TopicArn
	for q, raw := range map[string]string{qFanRaw: "true", qFanEnv: "false"} {
		a, err := h.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(h.urls[q]), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			return fmt.Errorf("GetQueueAttributes %s: %w", q, err)
		}
		if _, err := h.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: t.TopicArn, Protocol: aws.String("sqs"),
			Endpoint: aws.String(a.Attributes["QueueArn"]), Attributes: map[string]string{"RawMessageDelivery": raw}}); err != nil {
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
	if q == qFIFO {
		attrs["FifoQueue"] = "true"
	}
	out, err := h.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q), Attributes: attrs})
	if err != nil {
		return fmt.Errorf("CreateQueue %s: %w", q, err)
	}
	h.urls[q] = *out.QueueUrl
	return nil
}

// checkTopology checks that the queues and subscriptions survived, and
// returns the queues that did not (created again, empty, for the loop to
// go on).
func (h *harness) checkTopology(ctx context.Context) (lost map[string]bool, err error) {
	lost = map[string]bool{}
	for _, q := range queues {
		if _, err := h.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q)}); err != nil {
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
	return lost, nil
}

// call bounds one client call: a hung call is reported, not waited for.
func call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 20*time.Second)
}

// workers is one run's client goroutines.
type workers struct {
	h     *harness
	ctx   context.Context
	del   chan *hnd
	vis   chan *hnd
	wg    sync.WaitGroup
	cycle int
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

// stdSender sends to the standard queue, one at a time or in batches, some
// with a delay, while the queue holds few enough to peek at.
func (w *workers) stdSender(rnd *rand.Rand) {
	h := w.h
	for w.ctx.Err() == nil {
		if h.l.outstanding(qStd) > 400 {
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
			m := h.l.attempt(qStd, h.body("std"), "", 0)
			start := time.Now()
			ctx, cancel := call(w.ctx)
			out, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.urls[qStd]), MessageBody: aws.String(m.key), DelaySeconds: delay})
			cancel()
			if err != nil {
				if !w.failed("SendMessage", err, true, []*msg{m}) {
					return
				}
				continue
			}
			h.l.delayed(m, start, delay)
			h.l.acked(m, *out.MessageId, "")
			h.st.sends.Add(1)
			continue
		}
		n := 2 + rnd.IntN(9)
		ms := make([]*msg, n)
		entries := make([]types.SendMessageBatchRequestEntry, n)
		for i := range ms {
			ms[i] = h.l.attempt(qStd, h.body("std"), "", 0)
			entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(ms[i].key), DelaySeconds: delay * int32(i%2)}
		}
		start := time.Now()
		ctx, cancel := call(w.ctx)
		out, err := h.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(h.urls[qStd]), Entries: entries})
		cancel()
		if err != nil {
			if !w.failed("SendMessageBatch", err, true, ms) {
				return
			}
			continue
		}
		for _, s := range out.Successful {
			i, _ := strconv.Atoi(*s.Id)
			h.l.delayed(ms[i], start, delay*int32(i%2))
			h.l.acked(ms[i], *s.MessageId, "")
			h.st.sends.Add(1)
		}
		for _, f := range out.Failed {
			h.noteErr("SendMessageBatch entry", *f.Code)
		}
	}
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

// fifoSender sends one group's bodies in counter order, alone or in
// batches; the body is the deduplication id.
func (w *workers) fifoSender(group string) func(*rand.Rand) {
	return func(rnd *rand.Rand) {
		h := w.h
		for w.ctx.Err() == nil {
			if h.l.outstanding(qFIFO) > 300 {
				if !w.pause(20 * time.Millisecond) {
					return
				}
				continue
			}
			n := 1
			if rnd.IntN(2) == 0 {
				n = 2 + rnd.IntN(4)
			}
			ms := h.l.nextInGroup(group, n)
			if len(ms) == 1 {
				ctx, cancel := call(w.ctx)
				out, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.urls[qFIFO]), MessageBody: aws.String(ms[0].key),
					MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(ms[0].key)})
				cancel()
				if err != nil {
					w.failed("SendMessage FIFO", err, true, ms)
					return // the rest of the group waits for the resend after the restart
				}
				h.l.acked(ms[0], *out.MessageId, aws.ToString(out.SequenceNumber))
				h.st.sends.Add(1)
				continue
			}
			entries := make([]types.SendMessageBatchRequestEntry, len(ms))
			for i, m := range ms {
				entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(m.key),
					MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(m.key)}
			}
			ctx, cancel := call(w.ctx)
			out, err := h.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(h.urls[qFIFO]), Entries: entries})
			cancel()
			if err != nil {
				w.failed("SendMessageBatch FIFO", err, true, ms)
				return
			}
			ok := out.Successful
			sort.Slice(ok, func(i, j int) bool { a, _ := strconv.Atoi(*ok[i].Id); b, _ := strconv.Atoi(*ok[j].Id); return a < b })
			for _, s := range ok {
				i, _ := strconv.Atoi(*s.Id)
				h.l.acked(ms[i], *s.MessageId, aws.ToString(s.SequenceNumber))
				h.st.sends.Add(1)
			}
			if len(out.Failed) > 0 {
				for _, f := range out.Failed {
					h.noteErr("SendMessageBatch FIFO entry", *f.Code)
					i, _ := strconv.Atoi(*f.Id)
					h.l.unanswered(true, ms[i:i+1])
				}
				return
			}
		}
	}
}

// receiver receives from queue and hands each message to a deleter, a
// visibility changer, or holds it (its handle is then used after the
// restart, at the checkpoint).
func (w *workers) receiver(queue string, vis time.Duration, hold int) func(*rand.Rand) {
	return func(rnd *rand.Rand) {
		h := w.h
		for w.ctx.Err() == nil {
			var attempt *string
			if queue == qFIFO {
				attempt = aws.String(h.body("attempt"))
			}
			ctx, cancel := call(w.ctx)
			got, err := h.receive(ctx, queue, vis, attempt)
			cancel()
			if err != nil {
				if !w.failed("ReceiveMessage", err, false, nil) {
					if attempt != nil {
						h.l.lostReceive(*attempt)
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
					w.vis <- hd
				default:
					w.del <- hd
				}
			}
		}
	}
}

// receive calls ReceiveMessage (with a ReceiveRequestAttemptId on FIFO).
func (h *harness) receive(ctx context.Context, queue string, vis time.Duration, attempt *string) ([]received, error) {
	out, err := h.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(h.urls[queue]), MaxNumberOfMessages: 10,
		WaitTimeSeconds: 1, VisibilityTimeout: int32(vis / time.Second), ReceiveRequestAttemptId: attempt,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err != nil {
		return nil, err
	}
	got := make([]received, len(out.Messages))
	for i, m := range out.Messages {
		n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		got[i] = received{id: *m.MessageId, body: *m.Body, rh: *m.ReceiptHandle, count: n,
			seq: m.Attributes["SequenceNumber"], group: m.Attributes["MessageGroupId"]}
	}
	h.st.receives.Add(int64(len(got)))
	return got, nil
}

// deleter deletes what it is handed, alone or in batches.
func (w *workers) deleter(rnd *rand.Rand) {
	for {
		var first *hnd
		select {
		case <-w.ctx.Done():
			return
		case first = <-w.del:
		}
		byQueue := map[string][]*hnd{first.m.queue: {first}}
	more:
		for range 9 {
			select {
			case hd := <-w.del:
				byQueue[hd.m.queue] = append(byQueue[hd.m.queue], hd)
			default:
				break more
			}
		}
		for q, hs := range byQueue {
			ok := true
			if len(hs) > 1 && rnd.IntN(2) == 0 {
				ok = w.h.deleteBatch(w.ctx, q, hs)
			} else {
				for _, hd := range hs {
					if ok = w.h.deleteOne(w.ctx, hd); !ok {
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

// deleteOne deletes hd's message; false when the connection failed.
func (h *harness) deleteOne(ctx context.Context, hd *hnd) bool {
	h.l.deleting([]*hnd{hd})
	c, cancel := call(ctx)
	_, err := h.sqs.DeleteMessage(c, &sqs.DeleteMessageInput{QueueUrl: aws.String(h.urls[hd.m.queue]), ReceiptHandle: aws.String(hd.rh)})
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
	h.st.deletes.Add(1)
	return true
}

// deleteBatch deletes hs (of one queue) in one call; false when the
// connection failed.
func (h *harness) deleteBatch(ctx context.Context, queue string, hs []*hnd) bool {
	h.l.deleting(hs)
	entries := make([]types.DeleteMessageBatchRequestEntry, len(hs))
	for i, hd := range hs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(hd.rh)}
	}
	c, cancel := call(ctx)
	out, err := h.sqs.DeleteMessageBatch(c, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(h.urls[queue]), Entries: entries})
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
	for _, s := range out.Successful {
		i, _ := strconv.Atoi(*s.Id)
		h.l.deleted(hs[i])
		h.st.deletes.Add(1)
	}
	for _, f := range out.Failed {
		i, _ := strconv.Atoi(*f.Id)
		h.noteErr("DeleteMessageBatch entry", *f.Code)
		h.l.refused(hs[i], "DeleteMessageBatch", *f.Code, false)
	}
	return true
}

// visChanger makes most messages it is handed visible again (so they are
// received again, with a higher receive count) and extends the others'
// timeouts, then hands them to a deleter.
func (w *workers) visChanger(rnd *rand.Rand) {
	h := w.h
	for {
		var hd *hnd
		select {
		case <-w.ctx.Done():
			return
		case hd = <-w.vis:
		}
		vis := time.Duration(0)
		if rnd.IntN(10) < 3 {
			vis = 90 * time.Second
		}
		h.l.changing(hd)
		ctx, cancel := call(w.ctx)
		_, err := h.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(h.urls[hd.m.queue]),
			ReceiptHandle: aws.String(hd.rh), VisibilityTimeout: int32(vis / time.Second)})
		cancel()
		if err != nil {
			code, ok := answered(err)
			if !ok {
				h.l.forget(hd) // released or not: the handle may be stale now
				return
			}
			h.noteErr("ChangeMessageVisibility", code)
			h.l.refused(hd, "ChangeMessageVisibility", code, true)
			continue
		}
		h.l.changed(hd, vis)
		h.st.visChanges.Add(1)
		if vis > 0 {
			w.del <- hd
		}
	}
}

// publisher publishes to the topic (two SQS subscriptions and the HTTP
// one), a few dozen times a run.
func (w *workers) publisher(rnd *rand.Rand) {
	h := w.h
	for range 30 {
		if !w.pause(time.Duration(10+rnd.IntN(40)) * time.Millisecond) {
			return
		}
		p := h.l.publishing(h.body("pub"))
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
