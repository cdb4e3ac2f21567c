package topology

import (
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// Validate checks a topology as the API would: it applies the whole file to
// empty in-memory engines of the given account and region and reports
// every error (not only the first), each at the key it came from, in the
// API's own words. Nothing outside those engines is touched.
//
// Each namespaces section is checked in its own account and region.
func Validate(t *Topology, opts Options) error {
	secs := t.sections(opts)
	errs := checkSections(secs, t.src)
	for _, sec := range secs {
		p := compile(sec.t, sec.opts)
		p.dryRun(nil)
		errs = append(errs, p.errs...)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return errs
	}
	return nil
}

// scratch is the topology applied to throwaway engines: the proof that it
// is valid, and, for Apply, the attributes as the engines render them.
type scratch struct {
	sqs  *sqs.Engine
	sns  *sns.Engine
	subs map[*subPlan]string // subscription ARNs
}

func newEngines(opts Options, clk clock.Clock) (*sqs.Engine, *sns.Engine) {
	if clk == nil {
		clk = clock.NewManual(time.Now())
	}
	q := sqs.New(sqs.Options{Clock: clk, Region: opts.Region, Account: opts.Account, NoRecreateWait: true, NoPurgeWait: true})
	n := sns.New(sns.Options{Clock: clk, Region: opts.Region, Account: opts.Account})
	return q, n
}

// dryRun applies the plan to scratch engines, recording every error in
// p.errs. live, when given, is the server the plan is for: queues it has
// that the file names by ARN are copied in, so that references to them
// check as they will when applied.
func (p *plan) dryRun(live *Engines) *scratch {
	var clk clock.Clock
	if live != nil {
		clk = live.SQS.Clock()
	}
	s := &scratch{subs: map[*subPlan]string{}}
	s.sqs, s.sns = newEngines(p.opts, clk)
	defer s.sqs.Close()
	if live != nil {
		p.seed(s, live)
	}
	for _, q := range p.queues {
		p.dryQueue(s, q)
	}
	for _, t := range p.topics {
		p.dryTopic(s, t, clk)
	}
	return s
}

// seed copies the live queues the plan refers to by ARN but does not
// declare, so that redrive policies naming them validate.
func (p *plan) seed(s *scratch, live *Engines) {
	declared := map[string]bool{}
	for _, q := range p.queues {
		declared[q.name] = true
	}
	for _, name := range live.SQS.ListQueues("") {
		if declared[name] {
			continue
		}
		q, err := live.SQS.Queue(name)
		if err != nil {
			continue
		}
		attrs := map[string]string{}
		if q.Fifo() {
			attrs["FifoQueue"] = "true"
		}
		_, _ = s.sqs.CreateQueue(name, attrs, nil)
	}
}

func (p *plan) dryQueue(s *scratch, q *queuePlan) {
	if _, err := s.sqs.CreateQueue(q.name, q.attrs, q.tags); err == nil {
		return
	} else if !p.diagnoseQueue(s, q) {
		p.fail(q.path, "%v", err)
	}
}

// diagnoseQueue finds which keys of a queue CreateQueue refused: the name,
// each attribute, the tags. It leaves the queue created with the attributes
// that were valid, so that later references to it check. It reports false
// when no single key is to blame.
func (p *plan) diagnoseQueue(s *scratch, q *queuePlan) bool {
	base := map[string]string{}
	if v, ok := q.attrs["FifoQueue"]; ok {
		base["FifoQueue"] = v
	}
	created, err := s.sqs.CreateQueue(q.name, base, nil)
	if err != nil {
		p.fail(q.attrPathOr("FifoQueue"), "%v", err)
		return true
	}
	found := false
	for _, n := range sortedAttrs(q.attrs) {
		if n == "FifoQueue" {
			continue
		}
		if err := created.SetAttributes(map[string]string{n: q.attrs[n]}); err != nil {
			p.fail(q.attrPath[n], "%v", err)
			found = true
		}
	}
	if len(q.tags) > 0 {
		if _, err := s.sqs.CreateQueue(q.name, base, q.tags); err != nil {
			p.fail(q.path+".tags", "%v", err)
			found = true
		}
	}
	return found
}

func (q *queuePlan) attrPathOr(n string) string {
	if p, ok := q.attrPath[n]; ok {
		return p
	}
	return q.path
}

func (p *plan) dryTopic(s *scratch, t *topicPlan, clk clock.Clock) {
	topic, err := s.sns.CreateTopic(t.name, t.attrs, tags(t.tags))
	if err != nil {
		valid := p.diagnoseTopic(t, clk)
		if valid == nil {
			p.fail(t.path, "%v", err)
			return
		}
		// Go on with the attributes that were valid, to check the
		// subscriptions too.
		if topic, err = s.sns.CreateTopic(t.name, valid, nil); err != nil {
			return
		}
	}
	for _, sp := range t.subs {
		arn, err := s.sns.Subscribe(sns.SubscribeInput{
			TopicArn: topic.Arn(), Protocol: sp.protocol, Endpoint: sp.endpoint,
			Attributes: sp.attrs, ReturnSubscriptionArn: true,
		})
		if err != nil {
			if !p.diagnoseSubscription(s, t, sp, clk) {
				p.fail(sp.path, "%v", err)
			}
			continue
		}
		s.subs[sp] = arn
	}
}

// diagnoseTopic finds which keys of a topic CreateTopic refused, each on a
// fresh engine (CreateTopic's messages name no attribute). It returns the
// attributes that were valid, or nil when the name itself is refused or no
// key is to blame.
func (p *plan) diagnoseTopic(t *topicPlan, clk clock.Clock) map[string]string {
	base := map[string]string{}
	if v, ok := t.attrs["FifoTopic"]; ok {
		base["FifoTopic"] = v
	}
	probe := func(attrs map[string]string, tg map[string]string) error {
		q, n := newEngines(p.opts, clk)
		defer q.Close()
		_, err := n.CreateTopic(t.name, attrs, tags(tg))
		return err
	}
	if err := probe(base, nil); err != nil {
		p.fail(t.attrPathOr("FifoTopic"), "%v", err)
		return nil
	}
	valid := map[string]string{}
	for k, v := range base {
		valid[k] = v
	}
	found := false
	for _, n := range sortedAttrs(t.attrs) {
		if n == "FifoTopic" {
			continue
		}
		one := map[string]string{n: t.attrs[n]}
		for k, v := range base {
			one[k] = v
		}
		if err := probe(one, nil); err != nil {
			p.fail(t.attrPath[n], "%v", err)
			found = true
			continue
		}
		valid[n] = t.attrs[n]
	}
	if len(t.tags) > 0 {
		if err := probe(base, t.tags); err != nil {
			p.fail(t.path+".tags", "%v", err)
			found = true
		}
	}
	if !found {
		return nil
	}
	return valid
}

func (t *topicPlan) attrPathOr(n string) string {
	if p, ok := t.attrPath[n]; ok {
		return p
	}
	return t.path
}

// subscriptionOrder is the order Subscribe applies attributes in (the
// scope before the policy it scopes).
var subscriptionOrder = []string{
	"RawMessageDelivery", "FilterPolicyScope", "FilterPolicy", "RedrivePolicy",
	"DeliveryPolicy", "SubscriptionRoleArn", "ReplayPolicy",
}

// diagnoseSubscription finds which keys of a subscription Subscribe
// refused: the endpoint, then each attribute added in Subscribe's order,
// each try on a fresh engine holding the topic as the scratch one has it.
func (p *plan) diagnoseSubscription(s *scratch, t *topicPlan, sp *subPlan, clk clock.Clock) bool {
	topicArn := p.opts.topicArn(t.name)
	attrs, err := s.sns.TopicAttributes(topicArn)
	if err != nil {
		return false
	}
	topicAttrs := map[string]string{}
	for n, v := range attrs {
		if _, settable := t.attrs[n]; settable {
			topicAttrs[n] = v
		}
	}
	probe := func(sub map[string]string) error {
		q, n := newEngines(p.opts, clk)
		defer q.Close()
		if _, err := n.CreateTopic(t.name, topicAttrs, nil); err != nil {
			return nil // not this subscription's fault
		}
		_, err := n.Subscribe(sns.SubscribeInput{TopicArn: topicArn, Protocol: sp.protocol, Endpoint: sp.endpoint, Attributes: sub})
		return err
	}
	if err := probe(nil); err != nil {
		p.fail(sp.endpointPath, "%v", err)
		return true
	}
	valid := map[string]string{}
	found := false
	for _, n := range subscriptionOrder {
		v, ok := sp.attrs[n]
		if !ok {
			continue
		}
		valid[n] = v
		if err := probe(valid); err != nil {
			p.fail(sp.attrPath[n], "%v", err)
			delete(valid, n)
			found = true
		}
	}
	return found
}

func tags(m map[string]string) []sns.Tag {
	if len(m) == 0 {
		return nil
	}
	out := make([]sns.Tag, 0, len(m))
	for _, k := range sortedNames(m) {
		out = append(out, sns.Tag{Key: k, Value: m[k]})
	}
	return out
}
