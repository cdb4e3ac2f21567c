package topology

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Options say which account and region names resolve in.
type Options struct {
	Region  string // default us-east-1
	Account string // default 000000000000
}

func (o Options) withDefaults() Options {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Account == "" {
		o.Account = "000000000000"
	}
	return o
}

// plan is a topology turned into engine calls: names resolved to ARNs,
// values to the strings the API takes, queues in dependency order.
type plan struct {
	opts   Options
	queues []*queuePlan // dead-letter queues before their sources
	topics []*topicPlan // in name order
	errs   Errors
	src    *source
}

type queuePlan struct {
	name, path string
	attrs      map[string]string
	attrPath   map[string]string // attribute -> the key it came from
	tags       map[string]string
	dlq        string // a queue of this file it depends on, by name
}

type topicPlan struct {
	name, path string
	attrs      map[string]string
	attrPath   map[string]string
	tags       map[string]string
	subs       []*subPlan
}

type subPlan struct {
	path               string
	protocol, endpoint string
	endpointPath       string
	attrs              map[string]string
	attrPath           map[string]string
}

func (p *plan) fail(path, format string, args ...any) {
	p.errs = append(p.errs, p.src.errorAt(path, fmt.Sprintf(format, args...)))
}

func (o Options) queueArn(name string) string {
	return "arn:aws:sqs:" + o.Region + ":" + o.Account + ":" + name
}

func (o Options) topicArn(name string) string {
	return "arn:aws:sns:" + o.Region + ":" + o.Account + ":" + name
}

func (o Options) lambdaArn(name string) string {
	return "arn:aws:lambda:" + o.Region + ":" + o.Account + ":function:" + name
}

// localName is the resource name of an ARN of the given service in this
// account and region, or "".
func (o Options) localName(arn, service string) string {
	prefix := "arn:aws:" + service + ":" + o.Region + ":" + o.Account + ":"
	if name, ok := strings.CutPrefix(arn, prefix); ok {
		return name
	}
	return ""
}

func isArn(s string) bool { return strings.HasPrefix(s, "arn:") }

// compile turns a topology into a plan, reporting what can be known from
// the file alone: conflicting keys, dangling references, redrive cycles,
// duplicate subscriptions.
func compile(t *Topology, opts Options) *plan {
	p := &plan{opts: opts.withDefaults(), src: t.src}
	byName := map[string]*queuePlan{}
	for _, name := range sortedNames(t.Queues) {
		qp := p.queue(name, t.Queues[name], t)
		byName[name] = qp
	}
	p.order(byName)
	for _, name := range sortedNames(t.Topics) {
		p.topics = append(p.topics, p.topic(name, t.Topics[name], t))
	}
	return p
}

// attrs renders a file's attributes map as the API's strings.
func (p *plan) attrs(in map[string]any, path string) (map[string]string, map[string]string) {
	out, paths := map[string]string{}, map[string]string{}
	for _, n := range sortedNames(in) {
		ap := path + ".attributes." + n
		s, err := attrString(in[n])
		if err != nil {
			p.fail(ap, "%v", err)
			continue
		}
		out[n], paths[n] = s, ap
	}
	return out, paths
}

// set puts a short-form value under its AWS attribute name, unless the
// attributes map sets it too.
func (p *plan) set(attrs, paths map[string]string, name, value, path, key string) {
	if prev, ok := paths[name]; ok {
		p.fail(path, "%s and %s both set %s: keep one", key, strings.TrimPrefix(prev, parent(path)+"."), name)
		return
	}
	attrs[name], paths[name] = value, path
}

// queueRef resolves a reference to a queue: a name of this file, or an ARN.
func (p *plan) queueRef(ref, path string, t *Topology) (arn, local string, ok bool) {
	if isArn(ref) {
		return ref, p.opts.localName(ref, "sqs"), true
	}
	if _, declared := t.Queues[ref]; declared {
		return p.opts.queueArn(ref), ref, true
	}
	msg := fmt.Sprintf("queue %q is not declared under queues", ref)
	if s := closest(ref, sortedNames(t.Queues)); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	p.fail(path, "%s; declare it, or give its ARN", msg)
	return "", "", false
}

func (p *plan) queue(name string, q Queue, t *Topology) *queuePlan {
	path := "queues." + name
	qp := &queuePlan{name: name, path: path, tags: q.Tags}
	qp.attrs, qp.attrPath = p.attrs(q.Attributes, path)
	if _, ok := qp.attrs["FifoQueue"]; !ok && strings.HasSuffix(name, ".fifo") {
		qp.attrs["FifoQueue"], qp.attrPath["FifoQueue"] = "true", path
	}
	if q.Policy != nil {
		if s, err := attrString(q.Policy); err != nil {
			p.fail(path+".policy", "%v", err)
		} else {
			p.set(qp.attrs, qp.attrPath, "Policy", s, path+".policy", "policy")
		}
	}
	if r := q.Redrive; r != nil {
		rp := path + ".redrive"
		if arn, local, ok := p.queueRef(r.DeadLetterQueue, rp+".deadLetterQueue", t); ok {
			doc := map[string]any{"deadLetterTargetArn": arn}
			if r.MaxReceiveCount != 0 {
				doc["maxReceiveCount"] = r.MaxReceiveCount
			}
			b, _ := json.Marshal(doc)
			p.set(qp.attrs, qp.attrPath, "RedrivePolicy", string(b), rp, "redrive")
			if _, declared := t.Queues[local]; declared {
				qp.dlq = local
			}
		}
	} else if v, ok := qp.attrs["RedrivePolicy"]; ok {
		var doc struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		}
		if json.Unmarshal([]byte(v), &doc) == nil {
			if local := p.opts.localName(doc.DeadLetterTargetArn, "sqs"); local != "" {
				if _, declared := t.Queues[local]; declared {
					qp.dlq = local
				}
			}
		}
	}
	return qp
}

// order sorts queues so that each dead-letter queue comes before the queues
// that use it; a cycle of redrive policies is an error.
func (p *plan) order(byName map[string]*queuePlan) {
	const (
		unseen = iota
		visiting
		done
	)
	state := map[string]int{}
	var visit func(name string, chain []string)
	visit = func(name string, chain []string) {
		switch state[name] {
		case done:
			return
		case visiting:
			i := 0
			for chain[i] != name {
				i++
			}
			cycle := append(append([]string{}, chain[i:]...), name)
			closing := byName[chain[len(chain)-1]]
			p.fail(closing.path+".redrive", "redrive cycle: %s; a dead-letter queue cannot lead back to its source", strings.Join(cycle, " -> "))
			// Reported once: the rest of the check goes on without it.
			delete(closing.attrs, "RedrivePolicy")
			closing.dlq = ""
			return
		}
		state[name] = visiting
		q := byName[name]
		if q.dlq != "" && byName[q.dlq] != nil {
			visit(q.dlq, append(chain, name))
		}
		state[name] = done
		p.queues = append(p.queues, q)
	}
	names := sortedNames(byName)
	for _, n := range names {
		visit(n, nil)
	}
}

func (p *plan) topic(name string, t Topic, top *Topology) *topicPlan {
	path := "topics." + name
	tp := &topicPlan{name: name, path: path, tags: t.Tags}
	tp.attrs, tp.attrPath = p.attrs(t.Attributes, path)
	if _, ok := tp.attrs["FifoTopic"]; !ok && strings.HasSuffix(name, ".fifo") {
		tp.attrs["FifoTopic"], tp.attrPath["FifoTopic"] = "true", path
	}
	if t.Policy != nil {
		if s, err := attrString(t.Policy); err != nil {
			p.fail(path+".policy", "%v", err)
		} else {
			p.set(tp.attrs, tp.attrPath, "Policy", s, path+".policy", "policy")
		}
	}
	seen := map[string]string{}
	for i, s := range t.Subscriptions {
		sp := p.subscription(fmt.Sprintf("%s.subscriptions[%d]", path, i), s, top)
		if sp == nil {
			continue
		}
		key := sp.protocol + " " + sp.endpoint
		if prev, dup := seen[key]; dup {
			p.fail(sp.path, "subscribes %s %s again (as %s does): a topic has one subscription per endpoint", sp.protocol, sp.endpoint, prev)
			continue
		}
		seen[key] = sp.path
		tp.subs = append(tp.subs, sp)
	}
	return tp
}

func (p *plan) subscription(path string, s Subscription, t *Topology) *subPlan {
	sp := &subPlan{path: path, attrs: map[string]string{}, attrPath: map[string]string{}}
	short := []struct{ key, protocol, value string }{
		{"queue", "sqs", s.Queue}, {"http", "http", s.HTTP}, {"https", "https", s.HTTPS},
		{"lambda", "lambda", s.Lambda}, {"email", "email", s.Email}, {"email-json", "email-json", s.EmailJSON},
		{"sms", "sms", s.SMS}, {"firehose", "firehose", s.Firehose}, {"application", "application", s.Application},
	}
	var given []string
	for _, e := range short {
		if e.value != "" {
			given = append(given, e.key)
			sp.protocol, sp.endpoint, sp.endpointPath = e.protocol, e.value, path+"."+e.key
		}
	}
	switch {
	case len(given) > 1:
		p.fail(path, "names %s: a subscription has one endpoint", strings.Join(given, " and "))
		return nil
	case len(given) == 1 && (s.Protocol != "" || s.Endpoint != ""):
		p.fail(path, "names %s and protocol/endpoint: use one or the other", given[0])
		return nil
	case len(given) == 0:
		if s.Protocol == "" || s.Endpoint == "" {
			p.fail(path, "names no endpoint: give one of %s, or protocol and endpoint", strings.Join(endpointKeys, ", "))
			return nil
		}
		sp.protocol, sp.endpoint, sp.endpointPath = s.Protocol, s.Endpoint, path+".endpoint"
	}
	switch {
	case sp.protocol == "sqs" && !isArn(sp.endpoint):
		arn, _, ok := p.queueRef(sp.endpoint, sp.endpointPath, t)
		if !ok {
			return nil
		}
		sp.endpoint = arn
	case sp.protocol == "lambda" && !isArn(sp.endpoint):
		sp.endpoint = p.opts.lambdaArn(sp.endpoint)
	}
	set := func(name, value, key string) { p.set(sp.attrs, sp.attrPath, name, value, path+"."+key, key) }
	doc := func(name string, v any, key string) {
		if v == nil {
			return
		}
		str, err := attrString(v)
		if err != nil {
			p.fail(path+"."+key, "%v", err)
			return
		}
		set(name, str, key)
	}
	if s.Raw {
		set("RawMessageDelivery", "true", "raw")
	}
	if s.FilterPolicyScope != "" {
		set("FilterPolicyScope", s.FilterPolicyScope, "filterPolicyScope")
	}
	doc("FilterPolicy", s.FilterPolicy, "filterPolicy")
	doc("DeliveryPolicy", s.DeliveryPolicy, "deliveryPolicy")
	doc("ReplayPolicy", s.ReplayPolicy, "replayPolicy")
	if s.SubscriptionRoleArn != "" {
		set("SubscriptionRoleArn", s.SubscriptionRoleArn, "subscriptionRoleArn")
	}
	if r := s.Redrive; r != nil {
		rp := path + ".redrive"
		if r.MaxReceiveCount != 0 {
			p.fail(rp+".maxReceiveCount", "a subscription's redrive policy takes no maxReceiveCount (SNS retries by its delivery policy)")
		}
		if arn, _, ok := p.queueRef(r.DeadLetterQueue, rp+".deadLetterQueue", t); ok {
			b, _ := json.Marshal(map[string]string{"deadLetterTargetArn": arn})
			set("RedrivePolicy", string(b), "redrive")
		}
	}
	return sp
}

// sortedAttrs returns attribute names in the order the API applies them.
func sortedAttrs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
