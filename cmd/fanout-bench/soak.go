package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// --soak D runs mixed SQS and SNS traffic for D with --clients SDK clients
// (64 unless given) and checks what fanout promises (soakcheck.go): every
// acknowledged send is received, FIFO groups come out in order and never
// two receives hold one group. It samples the server's RSS and goroutine
// count as it goes and counts 5xx answers. The traffic, by client:
//
//	1/4  producers: SendMessage and SendMessageBatch(10) to 4 standard queues
//	1/8  FIFO producers: 8 groups each, sent in order, one message of each
//	     group per SendMessageBatch, over 2 FIFO queues
//	1/16 publishers: Publish to a standard topic with 2 raw SQS subscriptions,
//	     and to a FIFO topic (groups in order) with 1 raw FIFO subscription
//	2    watchers: GET /_fanout/sqs/queues, ListQueues, GetQueueAttributes,
//	     ListDeadLetterSourceQueues
//	rest consumers, spread over the 9 queues: ReceiveMessage(10, 1 s long
//	     poll); most receives are deleted (DeleteMessageBatch), one in 20 is
//	     made visible again (ChangeMessageVisibility 0) and received later
//
// Producers pause while a queue holds more than --window messages not yet
// received, so a server that keeps up holds a bounded amount. After D the
// producers stop and the consumers drain, for at most --soak-drain.

// minSoakClients leaves at least one consumer per queue.
const minSoakClients = 24

// soakOptions configure one soak.
type soakOptions struct {
	duration time.Duration
	sample   time.Duration // RSS and goroutine sampling interval
	drain    time.Duration // most time for the drain after the traffic
	clients  int
	size     int // message body bytes
	window   int // most messages acknowledged and not yet received, per queue
}

// soakProbe reads the server's RSS (KiB) and goroutine count; either may
// be -1 when unknown.
type soakProbe func(ctx context.Context) (rssKiB int64, goroutines int)

// soakSample is one reading during the soak.
type soakSample struct {
	At         time.Duration `json:"at_sec"`
	RSSKiB     int64         `json:"rss_kib"`
	Goroutines int           `json:"goroutines"`
	Sent       int64         `json:"acknowledged"`
	Deleted    int64         `json:"received"`
	Backlog    int           `json:"backlog"`
	Status5xx  int64         `json:"status_5xx"`
	Errors     int64         `json:"errors"`
}

// soakOp counts one kind of call.
type soakOp struct {
	calls, errors, status5xx atomic.Int64
	firstErr                 atomic.Value // string
}

var soakOpNames = []string{
	"SendMessage", "SendMessageBatch", "Publish", "Publish(fifo)", "ReceiveMessage", "DeleteMessageBatch",
	"ChangeMessageVisibilityBatch", "ListQueues", "GetQueueAttributes", "ListDeadLetterSourceQueues", "GET /_fanout/sqs/queues",
}

type soakQueue struct {
	name, url, arn string
	fifo           bool
	vis            time.Duration
	led            *ledger
}

// soakResult is what a soak found.
type soakResult struct {
	Duration   time.Duration
	Clients    int
	Samples    []soakSample
	Ops        map[string]*soakOp
	Tally      tally
	Drained    bool
	DrainTime  time.Duration
	IdleGorout int // goroutines 2 s after the drain
	BaseGorout int // goroutines before the traffic
	BaseRSSKiB int64
}

// violations counts what must be zero.
func (r *soakResult) violations() int64 {
	return r.Tally.lost + r.Tally.order + r.Tally.inflight
}

func (r *soakResult) status5xx() int64 {
	var n int64
	for _, op := range r.Ops {
		n += op.status5xx.Load()
	}
	return n
}

func (r *soakResult) errors() int64 {
	var n int64
	for _, op := range r.Ops {
		n += op.errors.Load()
	}
	return n
}

type soak struct {
	opts     soakOptions
	c        *sdkClient
	hc       *http.Client
	endpoint string
	prefix   string
	std, fif []*soakQueue // SendMessage targets
	fan      []*soakQueue // the standard topic's subscribers
	fanFifo  *soakQueue   // the FIFO topic's subscriber
	all      []*soakQueue
	topic    string
	topicF   string
	ops      map[string]*soakOp
	keys     atomic.Uint64
	pad      string
}

// runSoak runs one soak against endpoint. The resources it creates are
// named after prefix and deleted at the end.
func runSoak(ctx context.Context, endpoint, prefix string, o soakOptions, probe soakProbe, w io.Writer) (*soakResult, error) {
	if o.clients < minSoakClients {
		return nil, fmt.Errorf("--soak needs at least %d clients (a consumer for each of its 9 queues)", minSoakClients)
	}
	hc := newSDKHTTPClient(o.clients)
	s := &soak{opts: o, c: newSDKClient(endpoint, hc), hc: hc, endpoint: endpoint, prefix: prefix,
		ops: map[string]*soakOp{}, pad: payload(o.size)}
	for _, n := range soakOpNames {
		s.ops[n] = &soakOp{}
	}
	cleanup, err := s.setup(ctx)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		cleanup(cctx)
	}()
	if err != nil {
		return nil, err
	}

	res := &soakResult{Duration: o.duration, Clients: o.clients, Ops: s.ops}
	res.BaseRSSKiB, res.BaseGorout = probe(ctx)
	fmt.Fprintf(w, "soak: %v with %d clients against %s; server before traffic: RSS %s, %d goroutines\n",
		o.duration, o.clients, endpoint, kibText(res.BaseRSSKiB), res.BaseGorout)
	fmt.Fprintf(w, "%8s %10s %10s %12s %12s %8s %6s %7s\n", "at", "RSS", "goroutines", "acked", "received", "backlog", "5xx", "errors")

	start := time.Now()
	produce, stopProducers := context.WithTimeout(ctx, o.duration)
	defer stopProducers()
	consume, stopConsumers := context.WithCancel(ctx)
	defer stopConsumers()

	var producers, consumers sync.WaitGroup
	nStd, nFifo, nPub := o.clients/4, o.clients/8, max(o.clients/16, 2)
	nCons := o.clients - nStd - nFifo - nPub - 2
	for i := 0; i < nStd; i++ {
		producers.Add(1)
		go func() { defer producers.Done(); s.produceStd(produce, i) }()
	}
	for i := 0; i < nFifo; i++ {
		producers.Add(1)
		go func() { defer producers.Done(); s.produceFifo(produce, i) }()
	}
	for i := 0; i < nPub; i++ {
		producers.Add(1)
		go func() { defer producers.Done(); s.publish(produce, i) }()
	}
	for i := 0; i < 2; i++ {
		producers.Add(1)
		go func() { defer producers.Done(); s.watch(produce, i) }()
	}
	for i := 0; i < nCons; i++ {
		consumers.Add(1)
		go func() { defer consumers.Done(); s.consume(consume, s.all[i%len(s.all)], i) }()
	}

	sampleOnce := func() {
		rss, g := probe(ctx)
		sm := soakSample{At: time.Since(start).Round(time.Second), RSSKiB: rss, Goroutines: g, Status5xx: res.status5xx(), Errors: res.errors()}
		for _, q := range s.all {
			t := q.led.tally()
			sm.Sent += t.acked
			sm.Deleted += t.deleted
			sm.Backlog += q.led.backlog()
		}
		res.Samples = append(res.Samples, sm)
		fmt.Fprintf(w, "%8v %10s %10d %12d %12d %8d %6d %7d\n", sm.At, kibText(sm.RSSKiB), sm.Goroutines, sm.Sent, sm.Deleted, sm.Backlog, sm.Status5xx, sm.Errors)
	}
	tick := time.NewTicker(o.sample)
	defer tick.Stop()
traffic:
	for {
		select {
		case <-produce.Done():
			break traffic
		case <-tick.C:
			sampleOnce()
		}
	}
	producers.Wait()
	sampleOnce()

	// Drain: the consumers go on until every acknowledged message is received.
	drainStart := time.Now()
	deadline := time.After(o.drain)
drain:
	for {
		left := 0
		for _, q := range s.all {
			left += q.led.backlog()
		}
		if left == 0 {
			res.Drained = true
			break
		}
		select {
		case <-deadline:
			break drain
		case <-ctx.Done():
			break drain
		case <-time.After(100 * time.Millisecond):
		}
	}
	res.DrainTime = time.Since(drainStart)
	stopConsumers()
	consumers.Wait()
	hc.CloseIdleConnections()
	for _, q := range s.all {
		res.Tally.add(q.led.tally())
	}
	sampleOnce()
	// Long polls end within their second; after that the server's goroutines
	// should be back where they were before the traffic.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	_, res.IdleGorout = probe(ctx)
	printSoak(w, res)
	return res, nil
}

// setup creates the queues, topics and subscriptions; cleanup deletes them.
func (s *soak) setup(ctx context.Context) (cleanup func(context.Context), err error) {
	var undo []func(context.Context)
	cleanup = func(ctx context.Context) {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i](ctx)
		}
	}
	queue := func(name string, fifo bool) (*soakQueue, error) {
		q := &soakQueue{name: s.prefix + name, fifo: fifo, vis: 30 * time.Second, led: newLedger()}
		attrs := map[string]string{"VisibilityTimeout": "30"}
		if fifo {
			q.name += ".fifo"
			q.vis = 60 * time.Second
			attrs = map[string]string{"FifoQueue": "true", "VisibilityTimeout": "60"}
		}
		out, err := s.c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &q.name, Attributes: attrs})
		if err != nil {
			return nil, fmt.Errorf("CreateQueue %s: %w", q.name, err)
		}
		q.url = aws.ToString(out.QueueUrl)
		undo = append(undo, func(ctx context.Context) { _ = s.c.deleteQueue(ctx, q.url) })
		a, err := s.c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			return nil, fmt.Errorf("GetQueueAttributes %s: %w", q.name, err)
		}
		q.arn = a.Attributes["QueueArn"]
		s.all = append(s.all, q)
		return q, nil
	}
	for i := 0; i < 4; i++ {
		q, err := queue("std-"+strconv.Itoa(i), false)
		if err != nil {
			return cleanup, err
		}
		s.std = append(s.std, q)
	}
	for i := 0; i < 2; i++ {
		q, err := queue("fifo-"+strconv.Itoa(i), true)
		if err != nil {
			return cleanup, err
		}
		s.fif = append(s.fif, q)
	}
	for i := 0; i < 2; i++ {
		q, err := queue("fan-"+strconv.Itoa(i), false)
		if err != nil {
			return cleanup, err
		}
		s.fan = append(s.fan, q)
	}
	if s.fanFifo, err = queue("fan", true); err != nil {
		return cleanup, err
	}
	topic := func(name string, attrs map[string]string, subs ...*soakQueue) (string, error) {
		out, err := s.c.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(s.prefix + name), Attributes: attrs})
		if err != nil {
			return "", fmt.Errorf("CreateTopic %s: %w", name, err)
		}
		arn := aws.ToString(out.TopicArn)
		undo = append(undo, func(ctx context.Context) { _ = s.c.deleteTopic(ctx, arn) })
		for _, q := range subs {
			if err := s.c.subscribeQueue(ctx, arn, q.arn); err != nil {
				return "", err
			}
		}
		return arn, nil
	}
	if s.topic, err = topic("topic", nil, s.fan...); err != nil {
		return cleanup, err
	}
	s.topicF, err = topic("topic.fifo", map[string]string{"FifoTopic": "true"}, s.fanFifo)
	return cleanup, err
}

// do counts one call's outcome and reports whether it succeeded. Calls cut
// short by the end of their phase are not counted.
func (s *soak) do(ctx context.Context, op string, err error) bool {
	if err != nil && ctx.Err() != nil {
		return false
	}
	o := s.ops[op]
	o.calls.Add(1)
	if err == nil {
		return true
	}
	o.errors.Add(1)
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		o.status5xx.Add(1)
	}
	o.firstErr.CompareAndSwap(nil, err.Error())
	return false
}

// wait pauses a producer while any of qs holds --window messages not yet
// received. It reports false when ctx ends.
func (s *soak) wait(ctx context.Context, qs ...*soakQueue) bool {
	for {
		full := false
		for _, q := range qs {
			full = full || q.led.backlog() >= s.opts.window
		}
		if !full {
			return ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (s *soak) produceStd(ctx context.Context, id int) {
	// The end of the traffic stops the loop, never a call in flight: a send
	// cut short might be stored without its acknowledgement being known.
	call := context.WithoutCancel(ctx)
	q := s.std[id%len(s.std)]
	for i := 0; s.wait(ctx, q); i++ {
		if i%2 == 0 {
			k := s.keys.Add(1)
			_, err := s.c.sqs.SendMessage(call, &sqs.SendMessageInput{QueueUrl: &q.url, MessageBody: aws.String(soakBody(k, "", 0, s.pad))})
			if s.do(call, "SendMessage", err) {
				q.led.ack(k)
			}
			continue
		}
		in := &sqs.SendMessageBatchInput{QueueUrl: &q.url}
		keys := make([]uint64, 10)
		for j := range keys {
			keys[j] = s.keys.Add(1)
			in.Entries = append(in.Entries, sqstypes.SendMessageBatchRequestEntry{Id: &batchIDs[j], MessageBody: aws.String(soakBody(keys[j], "", 0, s.pad))})
		}
		out, err := s.c.sqs.SendMessageBatch(call, in)
		if err == nil && len(out.Failed) > 0 {
			err = fmt.Errorf("SendMessageBatch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Code))
		}
		if s.do(call, "SendMessageBatch", err) {
			q.led.ack(keys...)
		}
	}
}

// produceFifo owns 8 groups of one FIFO queue. Each batch carries the next
// message of every group; a failed entry is sent again, with the same
// deduplication id, before its group moves on, so each group's messages are
// sent exactly in order.
func (s *soak) produceFifo(ctx context.Context, id int) {
	// The end of the traffic stops the loop, never a call in flight: a send
	// cut short might be stored without its acknowledgement being known.
	call := context.WithoutCancel(ctx)
	q := s.fif[id%len(s.fif)]
	type next struct {
		group string
		n     int64
		k     uint64
	}
	pending := make([]next, 8)
	for j := range pending {
		pending[j] = next{group: fmt.Sprintf("p%d-%d", id, j), n: 1, k: s.keys.Add(1)}
	}
	for s.wait(ctx, q) {
		in := &sqs.SendMessageBatchInput{QueueUrl: &q.url}
		for j, p := range pending {
			in.Entries = append(in.Entries, sqstypes.SendMessageBatchRequestEntry{
				Id: &batchIDs[j], MessageBody: aws.String(soakBody(p.k, p.group, p.n, s.pad)),
				MessageGroupId: aws.String(p.group), MessageDeduplicationId: aws.String(strconv.FormatUint(p.k, 36)),
			})
		}
		out, err := s.c.sqs.SendMessageBatch(call, in)
		if err == nil && len(out.Failed) > 0 {
			err = fmt.Errorf("SendMessageBatch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Code))
		}
		if !s.do(call, "SendMessageBatch", err) && out == nil {
			continue // nothing known: all again, same ids
		}
		for _, ok := range out.Successful {
			j, _ := strconv.Atoi(aws.ToString(ok.Id))
			q.led.ack(pending[j].k)
			pending[j].n++
			pending[j].k = s.keys.Add(1)
		}
	}
}

// publish alternates between the standard topic (2 queues) and the FIFO
// topic (its groups in order, as produceFifo).
func (s *soak) publish(ctx context.Context, id int) {
	// The end of the traffic stops the loop, never a call in flight: a send
	// cut short might be stored without its acknowledgement being known.
	call := context.WithoutCancel(ctx)
	fifo := id%2 == 1
	group, n := fmt.Sprintf("pub%d", id), int64(1)
	k := s.keys.Add(1)
	for {
		if fifo && !s.wait(ctx, s.fanFifo) || !fifo && !s.wait(ctx, s.fan...) {
			return
		}
		if !fifo {
			_, err := s.c.sns.Publish(call, &sns.PublishInput{TopicArn: &s.topic, Message: aws.String(soakBody(k, "", 0, s.pad))})
			if s.do(call, "Publish", err) {
				for _, q := range s.fan {
					q.led.ack(k)
				}
			}
			k = s.keys.Add(1)
			continue
		}
		_, err := s.c.sns.Publish(call, &sns.PublishInput{TopicArn: &s.topicF, Message: aws.String(soakBody(k, group, n, s.pad)),
			MessageGroupId: &group, MessageDeduplicationId: aws.String(strconv.FormatUint(k, 36)),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String(strconv.FormatInt(n, 10))}}})
		if s.do(call, "Publish(fifo)", err) {
			s.fanFifo.led.ack(k)
			n++
			k = s.keys.Add(1)
		}
	}
}

// watch reads what operators and dashboards read, twice a second.
func (s *soak) watch(ctx context.Context, id int) {
	for i := 0; ctx.Err() == nil; i++ {
		if id == 0 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint+"/_fanout/sqs/queues", nil)
			resp, err := s.hc.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("HTTP %d", resp.StatusCode)
					if resp.StatusCode >= 500 {
						s.ops["GET /_fanout/sqs/queues"].status5xx.Add(1)
					}
				}
			}
			s.do(ctx, "GET /_fanout/sqs/queues", err)
			_, err = s.c.sqs.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: &s.prefix})
			s.do(ctx, "ListQueues", err)
		} else {
			q := s.all[i%len(s.all)]
			_, err := s.c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
			s.do(ctx, "GetQueueAttributes", err)
			_, err = s.c.sqs.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &q.url})
			s.do(ctx, "ListDeadLetterSourceQueues", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// consume receives from q until ctx ends. One receive in 20 is let go
// (visibility 0) instead of deleted; on a FIFO queue a receive is deleted or
// let go as a whole, so that the queue, not this consumer, decides the order.
func (s *soak) consume(ctx context.Context, q *soakQueue, id int) {
	for i := id; ctx.Err() == nil; i++ {
		out, err := s.c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if !s.do(ctx, "ReceiveMessage", err) || len(out.Messages) == 0 {
			continue
		}
		now := time.Now()
		keys := make([]uint64, len(out.Messages))
		var fm []fifoMsg
		for j, m := range out.Messages {
			k, f, ok := parseSoakBody(aws.ToString(m.Body))
			if !ok {
				q.led.mu.Lock()
				q.led.note("unreadable body %.40q", aws.ToString(m.Body))
				q.led.order++
				q.led.mu.Unlock()
			}
			keys[j] = k
			if q.fifo {
				fm = append(fm, f)
			}
		}
		if q.fifo {
			q.led.fifoReceived(now, q.vis, fm)
		}
		release := i%20 == 0
		var del, back []sqstypes.Message
		for j, m := range out.Messages {
			if release && (q.fifo || j == 0) {
				back = append(back, m)
			} else {
				del = append(del, m)
				q.led.deleting(keys[j])
			}
		}
		if q.fifo {
			last := map[string]int64{}
			for _, f := range fm {
				if release {
					last[f.group] = 0
				} else {
					last[f.group] = max(last[f.group], f.n)
				}
			}
			for g, n := range last {
				q.led.fifoRelease(g, n)
			}
		}
		if len(del) > 0 && !s.deleteBatch(ctx, q, del) && q.fifo {
			for _, f := range fm {
				q.led.taint(f.group)
			}
		}
		if len(back) > 0 && !s.releaseBatch(ctx, q, back) && q.fifo {
			for _, f := range fm {
				q.led.taint(f.group)
			}
		}
	}
}

func (s *soak) deleteBatch(ctx context.Context, q *soakQueue, ms []sqstypes.Message) bool {
	in := &sqs.DeleteMessageBatchInput{QueueUrl: &q.url}
	for j, m := range ms {
		in.Entries = append(in.Entries, sqstypes.DeleteMessageBatchRequestEntry{Id: &batchIDs[j], ReceiptHandle: m.ReceiptHandle})
	}
	out, err := s.c.sqs.DeleteMessageBatch(context.WithoutCancel(ctx), in)
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("DeleteMessageBatch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Code))
	}
	return s.do(context.WithoutCancel(ctx), "DeleteMessageBatch", err)
}

func (s *soak) releaseBatch(ctx context.Context, q *soakQueue, ms []sqstypes.Message) bool {
	in := &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &q.url}
	for j, m := range ms {
		in.Entries = append(in.Entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: &batchIDs[j], ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
	}
	out, err := s.c.sqs.ChangeMessageVisibilityBatch(context.WithoutCancel(ctx), in)
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("ChangeMessageVisibilityBatch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Code))
	}
	return s.do(context.WithoutCancel(ctx), "ChangeMessageVisibilityBatch", err)
}

func kibText(kib int64) string {
	if kib < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1fMiB", float64(kib)/1024)
}

// printSoak prints the verdict and the figures behind it.
func printSoak(w io.Writer, r *soakResult) {
	t := r.Tally
	fmt.Fprintf(w, "\ncalls:\n")
	for _, n := range soakOpNames {
		o := r.Ops[n]
		line := fmt.Sprintf("  %-30s %10d calls %6d errors %4d 5xx", n, o.calls.Load(), o.errors.Load(), o.status5xx.Load())
		if e, _ := o.firstErr.Load().(string); e != "" {
			line += "  first: " + strings.ReplaceAll(e, "\n", " ")
		}
		fmt.Fprintln(w, line)
	}
	drain := fmt.Sprintf("drained in %v", r.DrainTime.Round(time.Millisecond))
	if !r.Drained {
		drain = fmt.Sprintf("NOT drained after %v", r.DrainTime.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "messages: %d acknowledged, %d received for deletion, %s\n", t.acked, t.deleted, drain)
	fmt.Fprintf(w, "  lost (acknowledged, never received): %d\n", t.lost)
	fmt.Fprintf(w, "  received again after being received for deletion (duplicates): %d; received, never acknowledged: %d\n", t.dups, t.early)
	fmt.Fprintf(w, "FIFO: %d groups; order violations %d; a group in flight twice %d; holds that outlived the visibility timeout %d; groups unchecked after a failed call %d\n",
		t.groups, t.order, t.inflight, t.expired, t.tainted)
	for _, s := range t.samples {
		fmt.Fprintf(w, "  violation: %s\n", s)
	}
	if len(r.Samples) > 0 {
		first, last := r.Samples[0], r.Samples[len(r.Samples)-1]
		minR, maxR, maxG := first.RSSKiB, first.RSSKiB, first.Goroutines
		for _, s := range r.Samples {
			minR, maxR, maxG = min(minR, s.RSSKiB), max(maxR, s.RSSKiB), max(maxG, s.Goroutines)
		}
		// Growth from a quarter in (warm) to the last sample under traffic.
		warm := r.Samples[len(r.Samples)/4]
		underLoad := r.Samples[max(len(r.Samples)-2, 0)]
		fmt.Fprintf(w, "server: RSS %s before traffic, %s to %s during, %s at a quarter, %s at the end of traffic, %s after the drain\n",
			kibText(r.BaseRSSKiB), kibText(minR), kibText(maxR), kibText(warm.RSSKiB), kibText(underLoad.RSSKiB), kibText(last.RSSKiB))
		fmt.Fprintf(w, "  goroutines %d before traffic, at most %d during, %d after the drain, %d idle 2 s later\n",
			r.BaseGorout, maxG, last.Goroutines, r.IdleGorout)
	}
	verdict := "PASS"
	if r.violations() > 0 || r.status5xx() > 0 || !r.Drained {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "soak %s: %d violations, %d 5xx, %d other errors\n", verdict, r.violations(), r.status5xx(), r.errors()-r.status5xx())
}

// runSoakCommand is --soak: against a fanout it starts (with --pprof, for
// the goroutine count) or a running one given by --target URL.
func runSoakCommand(ctx context.Context, cfg *config, bin string, w io.Writer) error {
	endpoint, pid := cfg.targets[0], 0
	if endpoint == "fanout" {
		t, err := startProcess(ctx, "fanout", bin, "--log-level", "error", "--pprof")
		if err != nil {
			return err
		}
		defer t.stop()
		endpoint, pid = t.endpoint, t.pid()
		fmt.Fprintf(os.Stderr, "target fanout at %s (pid %d)\n", endpoint, pid)
	} else if _, err := startTarget(ctx, endpoint, "", nil); err != nil {
		return err
	}
	probe := func(ctx context.Context) (int64, int) {
		rss := int64(-1)
		if pid != 0 {
			if v, err := processRSS(pid); err == nil {
				rss = v
			}
		}
		return rss, goroutineCount(ctx, endpoint)
	}
	prefix := "soak-" + strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36) + "-"
	res, err := runSoak(ctx, endpoint, prefix, cfg.soak, probe, w)
	if err != nil {
		return err
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"soak": res.summary()}); err != nil {
			return err
		}
	}
	if res.violations() > 0 || res.status5xx() > 0 || !res.Drained {
		return errors.New("soak failed")
	}
	return nil
}

// goroutineCount reads the server's goroutine count from its goroutine
// profile (served with --pprof), or -1.
func goroutineCount(ctx context.Context, endpoint string) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/_fanout/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return -1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var total int
	if _, err := fmt.Fscanf(resp.Body, "goroutine profile: total %d", &total); err != nil || resp.StatusCode != http.StatusOK {
		return -1
	}
	return total
}

// summary is the soak's result for --json.
func (r *soakResult) summary() map[string]any {
	ops := map[string]any{}
	for n, o := range r.Ops {
		ops[n] = map[string]int64{"calls": o.calls.Load(), "errors": o.errors.Load(), "status_5xx": o.status5xx.Load()}
	}
	t := r.Tally
	return map[string]any{
		"duration_sec": r.Duration.Seconds(), "clients": r.Clients, "samples": r.Samples, "calls": ops,
		"acknowledged": t.acked, "received": t.deleted, "lost": t.lost, "received_again": t.dups,
		"received_unacknowledged": t.early, "fifo_groups": t.groups, "fifo_order_violations": t.order,
		"fifo_group_in_flight_twice": t.inflight, "drained": r.Drained, "drain_sec": r.DrainTime.Seconds(),
		"goroutines_before": r.BaseGorout, "goroutines_idle_after": r.IdleGorout, "rss_before_kib": r.BaseRSSKiB,
		"violations": r.violations(), "status_5xx": r.status5xx(),
	}
}
