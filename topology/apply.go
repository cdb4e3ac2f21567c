package topology

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// Engines are the running engines a topology is applied to or exported
// from (a fanout.Server's SQS() and SNS()).
type Engines struct {
	SQS *sqs.Engine
	SNS *sns.Engine
	// Namespace, when set, returns the engines of another account and
	// region, for a file's namespaces sections: with create, made if
	// missing; without, possibly empty engines that are not kept. A file
	// with such sections is refused when Namespace is nil.
	Namespace func(account, region string, create bool) Engines
	// Namespaces, when set, lists every namespace's engines, for Export.
	Namespaces func() []Engines
}

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// Prune deletes the queues, topics and subscriptions the file does not
	// name. Without it Apply only adds and updates.
	Prune bool
	// DryRun validates against the engines and reports what Apply would
	// do, changing nothing.
	DryRun bool
}

// Change is one thing Apply did (or, in a dry run, would do).
type Change struct {
	// Action is create, update, tag, delete, subscribe or unsubscribe.
	Action string `json:"action"`
	// Kind is queue, topic or subscription.
	Kind string `json:"kind"`
	// Name is the queue or topic name; for a subscription, its topic's.
	Name string `json:"name"`
	// Endpoint is a subscription's protocol and endpoint.
	Endpoint string `json:"endpoint,omitempty"`
	// Attributes are the attributes an update set.
	Attributes []string `json:"attributes,omitempty"`
	// Account and Region are set for a change in a namespaces section.
	Account string `json:"account,omitempty"`
	Region  string `json:"region,omitempty"`
}

func (c Change) String() string {
	s := c.Action + " " + c.Kind + " " + c.Name
	if c.Account != "" {
		s += " in " + c.Account + "/" + c.Region
	}
	if c.Endpoint != "" {
		s += " " + c.Endpoint
	}
	if len(c.Attributes) > 0 {
		s += " (" + strings.Join(c.Attributes, ", ") + ")"
	}
	return s
}

// Report is what Apply did. An Apply that found nothing to do has no
// changes.
type Report struct {
	Changes []Change `json:"changes"`
}

// Apply makes the engines hold what the topology declares: it creates what
// is missing and sets the attributes and tags the file names that differ;
// attributes the file does not name are left as they are. The whole file
// is first checked on scratch engines, as Validate does, and against the
// engines (a queue's FIFO type cannot change): an invalid file changes
// nothing and Apply returns Errors. Applying the same file twice changes
// nothing the second time.
//
// Each namespaces section is applied to its account and region (see
// Engines.Namespace), after the same checks; queues of every section are
// made before any topic, so a subscription may name a queue of another
// section. Prune deletes only in the namespaces the file has a section for
// (the root's always): a file for one account leaves the others alone.
func Apply(t *Topology, e Engines, opts ApplyOptions) (*Report, error) {
	secs := t.sections(Options{Region: e.SQS.Region(), Account: e.SQS.Account()})
	errs := checkSections(secs, t.src)
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	var plans []*applier
	report := &Report{Changes: []Change{}}
	for i, sec := range secs {
		eng := e
		if i > 0 {
			if e.Namespace == nil {
				errs = append(errs, t.src.errorAt(sec.path, "this server serves one account and region: namespaces cannot be applied here"))
				continue
			}
			eng = e.Namespace(sec.opts.Account, sec.opts.Region, false)
		}
		p := compile(sec.t, sec.opts)
		p.checkLive(eng)
		s := p.dryRun(&eng)
		errs = append(errs, p.errs...)
		a := &applier{p: p, s: s, e: eng, dry: opts.DryRun, report: report}
		if i > 0 {
			a.account, a.region = sec.opts.Account, sec.opts.Region
			if !opts.DryRun && len(sec.t.Queues)+len(sec.t.Topics) > 0 {
				a.e = e.Namespace(sec.opts.Account, sec.opts.Region, true)
			}
		}
		plans = append(plans, a)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	for _, a := range plans {
		if opts.Prune {
			a.prune()
		}
		for _, q := range a.p.queues {
			a.queue(q)
		}
	}
	for _, a := range plans {
		for _, t := range a.p.topics {
			a.topic(t)
		}
		errs = append(errs, a.errs...)
	}
	if len(errs) > 0 {
		return report, errs
	}
	return report, nil
}

// checkLive reports what the live engines make impossible: changing the
// type of a queue or topic that exists.
func (p *plan) checkLive(e Engines) {
	for _, q := range p.queues {
		if live, err := e.SQS.Queue(q.name); err == nil {
			if fifo := strings.EqualFold(q.attrs["FifoQueue"], "true"); fifo != live.Fifo() {
				p.fail(q.attrPathOr("FifoQueue"), "InvalidAttributeValue: Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
			}
		}
	}
	for _, t := range p.topics {
		if attrs, err := e.SNS.TopicAttributes(p.opts.topicArn(t.name)); err == nil {
			if fifo := strings.EqualFold(t.attrs["FifoTopic"], "true"); fifo != (attrs["FifoTopic"] == "true") {
				p.fail(t.attrPathOr("FifoTopic"), "InvalidParameter: Invalid parameter: Attributes Reason: Topic already exists with different attributes (FifoTopic cannot change)")
			}
		}
	}
}

type applier struct {
	p      *plan
	s      *scratch
	e      Engines
	dry    bool
	report *Report
	errs   Errors
	// account and region name a namespaces section's changes.
	account, region string
}

func (a *applier) did(c Change) {
	c.Account, c.Region = a.account, a.region
	a.report.Changes = append(a.report.Changes, c)
}

func (a *applier) failed(path string, err error) {
	a.errs = append(a.errs, a.p.src.errorAt(path, err.Error()))
}

func (a *applier) queue(q *queuePlan) {
	live, err := a.e.SQS.Queue(q.name)
	if err != nil {
		a.did(Change{Action: "create", Kind: "queue", Name: q.name})
		if !a.dry {
			if _, err := a.e.SQS.CreateQueue(q.name, q.attrs, q.tags); err != nil {
				a.failed(q.path, err)
			}
		}
		return
	}
	want, _ := a.s.sqs.Queue(q.name)
	differ := map[string]string{}
	for _, n := range sortedAttrs(q.attrs) {
		if n == "FifoQueue" {
			continue
		}
		if queueAttr(want, n) != queueAttr(live, n) {
			differ[n] = q.attrs[n]
		}
	}
	if len(differ) > 0 {
		a.did(Change{Action: "update", Kind: "queue", Name: q.name, Attributes: sortedAttrs(differ)})
		if !a.dry {
			if err := live.SetAttributes(differ); err != nil {
				a.failed(q.path, err)
			}
		}
	}
	if tg := changedTags(live.Tags(), q.tags); len(tg) > 0 {
		a.did(Change{Action: "tag", Kind: "queue", Name: q.name, Attributes: sortedNames(tg)})
		if !a.dry {
			if err := live.Tag(tg); err != nil {
				a.failed(q.path+".tags", err)
			}
		}
	}
}

func queueAttr(q *sqs.Queue, name string) string {
	attrs, err := q.Attributes([]string{name})
	if err != nil || len(attrs) == 0 {
		return ""
	}
	return attrs[0].Value
}

// changedTags are the tags of want that have is lacks or holds otherwise.
func changedTags(have, want map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		if cur, ok := have[k]; !ok || cur != v {
			out[k] = v
		}
	}
	return out
}

func (a *applier) topic(t *topicPlan) {
	arn := a.p.opts.topicArn(t.name)
	live, err := a.e.SNS.TopicAttributes(arn)
	if err != nil {
		a.did(Change{Action: "create", Kind: "topic", Name: t.name})
		if !a.dry {
			if _, err := a.e.SNS.CreateTopic(t.name, t.attrs, tags(t.tags)); err != nil {
				a.failed(t.path, err)
				return
			}
		}
		for _, sp := range t.subs {
			a.subscribe(t, sp, arn)
		}
		return
	}
	want, _ := a.s.sns.TopicAttributes(arn)
	var differ []string
	for _, n := range sortedAttrs(t.attrs) {
		if n != "FifoTopic" && want[n] != live[n] {
			differ = append(differ, n)
		}
	}
	if len(differ) > 0 {
		a.did(Change{Action: "update", Kind: "topic", Name: t.name, Attributes: differ})
		for _, n := range differ {
			if a.dry {
				break
			}
			if err := a.e.SNS.SetTopicAttribute(arn, n, t.attrs[n]); err != nil {
				a.failed(t.attrPath[n], err)
			}
		}
	}
	have := map[string]string{}
	if cur, err := a.e.SNS.ListTags(arn); err == nil {
		for _, tg := range cur {
			have[tg.Key] = tg.Value
		}
	}
	if tg := changedTags(have, t.tags); len(tg) > 0 {
		a.did(Change{Action: "tag", Kind: "topic", Name: t.name, Attributes: sortedNames(tg)})
		if !a.dry {
			if err := a.e.SNS.TagResource(arn, tags(tg)); err != nil {
				a.failed(t.path+".tags", err)
			}
		}
	}
	existing := subscriptionsOf(a.e.SNS, arn)
	for _, sp := range t.subs {
		subArn, ok := existing[sp.protocol+" "+sp.endpoint]
		if !ok {
			a.subscribe(t, sp, arn)
			continue
		}
		a.updateSubscription(t, sp, subArn)
	}
}

func (a *applier) subscribe(t *topicPlan, sp *subPlan, topicArn string) {
	a.did(Change{Action: "subscribe", Kind: "subscription", Name: t.name, Endpoint: sp.protocol + " " + sp.endpoint})
	if a.dry {
		return
	}
	_, err := a.e.SNS.Subscribe(sns.SubscribeInput{TopicArn: topicArn, Protocol: sp.protocol, Endpoint: sp.endpoint, Attributes: sp.attrs})
	if err != nil {
		a.failed(sp.path, err)
	}
}

func (a *applier) updateSubscription(t *topicPlan, sp *subPlan, subArn string) {
	live, err := a.e.SNS.SubscriptionAttributes(subArn)
	if err != nil {
		a.failed(sp.path, err)
		return
	}
	want, _ := a.s.sns.SubscriptionAttributes(a.s.subs[sp])
	var differ []string
	for _, n := range subscriptionOrder {
		if _, named := sp.attrs[n]; named && want[n] != live[n] {
			differ = append(differ, n)
		}
	}
	if len(differ) == 0 {
		return
	}
	a.did(Change{Action: "update", Kind: "subscription", Name: t.name, Endpoint: sp.protocol + " " + sp.endpoint, Attributes: differ})
	for _, n := range differ {
		if a.dry {
			break
		}
		if err := a.e.SNS.SetSubscriptionAttribute(subArn, n, sp.attrs[n]); err != nil {
			a.failed(sp.attrPath[n], err)
		}
	}
}

// subscriptionsOf maps "protocol endpoint" to the ARN of each subscription
// of a topic, pending ones included.
func subscriptionsOf(e *sns.Engine, topicArn string) map[string]string {
	out := map[string]string{}
	token := ""
	for {
		page, next, err := e.ListSubscriptionsByTopic(topicArn, token)
		if err != nil {
			break
		}
		for _, s := range page {
			if strings.HasPrefix(s.SubscriptionArn, "arn:") {
				out[s.Protocol+" "+s.Endpoint] = s.SubscriptionArn
			}
		}
		if next == "" {
			break
		}
		token = next
	}
	for _, s := range e.PendingSubscriptions() {
		if s.TopicArn == topicArn {
			out[s.Protocol+" "+s.Endpoint] = s.SubscriptionArn
		}
	}
	return out
}

// prune deletes what the file does not name: subscriptions of its topics
// first, then topics, then queues.
func (a *applier) prune() {
	named := map[string]*topicPlan{}
	for _, t := range a.p.topics {
		named[t.name] = t
	}
	for _, arn := range allTopics(a.e.SNS) {
		name := arn[strings.LastIndexByte(arn, ':')+1:]
		t, keep := named[name]
		if !keep {
			a.did(Change{Action: "delete", Kind: "topic", Name: name})
			if !a.dry {
				if err := a.e.SNS.DeleteTopic(arn); err != nil {
					a.failed("topics", err)
				}
			}
			continue
		}
		want := map[string]bool{}
		for _, sp := range t.subs {
			want[sp.protocol+" "+sp.endpoint] = true
		}
		existing := subscriptionsOf(a.e.SNS, arn)
		for _, key := range sortedNames(existing) {
			if want[key] {
				continue
			}
			a.did(Change{Action: "unsubscribe", Kind: "subscription", Name: name, Endpoint: key})
			if !a.dry {
				if err := a.e.SNS.Unsubscribe(existing[key]); err != nil {
					a.failed(t.path, err)
				}
			}
		}
	}
	queues := map[string]bool{}
	for _, q := range a.p.queues {
		queues[q.name] = true
	}
	for _, name := range a.e.SQS.ListQueues("") {
		if queues[name] {
			continue
		}
		a.did(Change{Action: "delete", Kind: "queue", Name: name})
		if !a.dry {
			if err := a.e.SQS.DeleteQueue(name); err != nil {
				a.failed("queues", fmt.Errorf("%s: %w", name, err))
			}
		}
	}
}

// allTopics lists every topic ARN, in name order.
func allTopics(e *sns.Engine) []string {
	var out []string
	token := ""
	for {
		page, next, err := e.ListTopics(token)
		if err != nil {
			break
		}
		out = append(out, page...)
		if next == "" {
			break
		}
		token = next
	}
	sort.Strings(out)
	return out
}
