package topology

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// Read-only attributes, which a file cannot set and Export leaves out.
var (
	queueReadOnly = map[string]bool{
		"QueueArn": true, "ApproximateNumberOfMessages": true, "ApproximateNumberOfMessagesNotVisible": true,
		"ApproximateNumberOfMessagesDelayed": true, "CreatedTimestamp": true, "LastModifiedTimestamp": true,
		"FifoQueue": true, // implied by the name
	}
	topicReadOnly = map[string]bool{
		"TopicArn": true, "Owner": true, "SubscriptionsConfirmed": true, "SubscriptionsPending": true,
		"SubscriptionsDeleted": true, "EffectiveDeliveryPolicy": true, "BeginningArchiveTime": true,
		"FifoTopic": true,
	}
)

// Export reads the engines' queues, topics and subscriptions into a
// topology that Apply turns back into the same state. Attributes at their
// default value are left out; names of this account and region are written
// as names, others as ARNs. With Engines.Namespaces, every other namespace
// that holds something is a section of Namespaces.
func Export(e Engines) (*Topology, error) {
	t := exportOne(e)
	if e.Namespaces == nil {
		return t, nil
	}
	for _, o := range e.Namespaces() {
		if o.SQS.Account() == e.SQS.Account() && o.SQS.Region() == e.SQS.Region() {
			continue // the root
		}
		x := exportOne(o)
		if len(x.Queues)+len(x.Topics) > 0 {
			t.Namespaces = append(t.Namespaces, Namespace{Account: o.SQS.Account(), Region: o.SQS.Region(), Queues: x.Queues, Topics: x.Topics})
		}
	}
	return t, nil
}

// exportOne reads one namespace.
func exportOne(e Engines) *Topology {
	opts := Options{Region: e.SQS.Region(), Account: e.SQS.Account()}
	defQ, defT := newEngines(opts, e.SQS.Clock())
	defer defQ.Close()
	t := &Topology{}
	for _, name := range e.SQS.ListQueues("") {
		q, err := e.SQS.Queue(name)
		if err != nil {
			continue // deleted meanwhile
		}
		if t.Queues == nil {
			t.Queues = map[string]Queue{}
		}
		t.Queues[name] = exportQueue(q, defQ, opts)
	}
	for _, arn := range allTopics(e.SNS) {
		name := arn[strings.LastIndexByte(arn, ':')+1:]
		tp, err := exportTopic(e.SNS, arn, name, defT, opts)
		if err != nil {
			continue // deleted meanwhile
		}
		if t.Topics == nil {
			t.Topics = map[string]Topic{}
		}
		t.Topics[name] = tp
	}
	return t
}

func attrMap(list []sqs.Attribute) map[string]string {
	m := make(map[string]string, len(list))
	for _, a := range list {
		m[a.Name] = a.Value
	}
	return m
}

func exportQueue(q *sqs.Queue, defaults *sqs.Engine, opts Options) Queue {
	base := map[string]string{}
	if q.Fifo() {
		base["FifoQueue"] = "true"
	}
	var def map[string]string
	if d, err := defaults.CreateQueue(q.Name(), base, nil); err == nil {
		list, _ := d.Attributes([]string{"All"})
		def = attrMap(list)
	}
	list, _ := q.Attributes([]string{"All"})
	out := Queue{Tags: q.Tags()}
	if len(out.Tags) == 0 {
		out.Tags = nil
	}
	for n, v := range attrMap(list) {
		if queueReadOnly[n] || def[n] == v {
			continue
		}
		switch n {
		case "Policy":
			out.Policy = document(v)
			continue
		case "RedrivePolicy":
			var rp struct {
				DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
				MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
			}
			if json.Unmarshal([]byte(v), &rp) == nil {
				count, err := strconv.Atoi(strings.Trim(string(rp.MaxReceiveCount), `"`))
				if err == nil {
					out.Redrive = &Redrive{DeadLetterQueue: opts.shortQueue(rp.DeadLetterTargetArn), MaxReceiveCount: count}
					continue
				}
			}
		}
		if out.Attributes == nil {
			out.Attributes = map[string]any{}
		}
		out.Attributes[n] = typed(v, queueAttrs[n])
	}
	return out
}

// shortQueue writes a queue ARN of this account and region as its name.
func (o Options) shortQueue(arn string) string {
	if name := o.localName(arn, "sqs"); name != "" {
		return name
	}
	return arn
}

// typed turns an attribute's string into the value a person would write.
func typed(v string, t attrType) any {
	switch t {
	case intAttr:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case boolAttr:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case docAttr:
		return document(v)
	}
	return v
}

// deliveryPolicy is a DeliveryPolicy document without the members the
// engine renders as null.
func deliveryPolicy(v string) any {
	doc := document(v)
	if m, ok := doc.(map[string]any); ok {
		dropNulls(m)
	}
	return doc
}

func dropNulls(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(x)
		}
	}
}

// document parses a JSON document, keeping the text when it is not JSON.
func document(v string) any {
	var doc any
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return v
	}
	return numbers(doc)
}

// numbers turns json.Number into int64 or float64, which YAML writes plainly.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

func exportTopic(e *sns.Engine, arn, name string, defaults *sns.Engine, opts Options) (Topic, error) {
	attrs, err := e.TopicAttributes(arn)
	if err != nil {
		return Topic{}, err
	}
	base := map[string]string{}
	if attrs["FifoTopic"] == "true" {
		base["FifoTopic"] = "true"
	}
	var def map[string]string
	if _, err := defaults.CreateTopic(name, base, nil); err == nil {
		def, _ = defaults.TopicAttributes(arn)
	}
	var out Topic
	for n, v := range attrs {
		if topicReadOnly[n] || def[n] == v {
			continue
		}
		if n == "Policy" {
			out.Policy = document(v)
			continue
		}
		if out.Attributes == nil {
			out.Attributes = map[string]any{}
		}
		out.Attributes[n] = typed(v, topicAttrs[n])
		if n == "DeliveryPolicy" {
			out.Attributes[n] = deliveryPolicy(v)
		}
	}
	if tg, err := e.ListTags(arn); err == nil && len(tg) > 0 {
		out.Tags = map[string]string{}
		for _, x := range tg {
			out.Tags[x.Key] = x.Value
		}
	}
	for _, info := range subscriptionList(e, arn) {
		a, err := e.SubscriptionAttributes(info.arn)
		if err != nil {
			continue
		}
		out.Subscriptions = append(out.Subscriptions, exportSubscription(info.protocol, info.endpoint, a, opts))
	}
	return out, nil
}

type subInfo struct{ arn, protocol, endpoint string }

// subscriptionList is a topic's subscriptions, oldest first, pending ones
// with their ARN.
func subscriptionList(e *sns.Engine, topicArn string) []subInfo {
	pending := map[string]string{}
	for _, s := range e.PendingSubscriptions() {
		if s.TopicArn == topicArn {
			pending[s.Protocol+" "+s.Endpoint] = s.SubscriptionArn
		}
	}
	var out []subInfo
	token := ""
	for {
		page, next, err := e.ListSubscriptionsByTopic(topicArn, token)
		if err != nil {
			break
		}
		for _, s := range page {
			arn := s.SubscriptionArn
			if !strings.HasPrefix(arn, "arn:") {
				arn = pending[s.Protocol+" "+s.Endpoint]
			}
			if arn != "" {
				out = append(out, subInfo{arn, s.Protocol, s.Endpoint})
			}
		}
		if next == "" {
			break
		}
		token = next
	}
	return out
}

func exportSubscription(protocol, endpoint string, a map[string]string, opts Options) Subscription {
	var s Subscription
	switch protocol {
	case "sqs":
		s.Queue = opts.shortQueue(endpoint)
	case "lambda":
		s.Lambda = endpoint
		if name, ok := strings.CutPrefix(endpoint, opts.lambdaArn("")); ok && name != "" {
			s.Lambda = name
		}
	case "http", "https", "email", "email-json", "sms", "firehose", "application":
		*s.endpointField(protocol) = endpoint
	default:
		s.Protocol, s.Endpoint = protocol, endpoint
	}
	s.Raw = a["RawMessageDelivery"] == "true"
	if v := a["FilterPolicy"]; v != "" {
		s.FilterPolicy = document(v)
		if scope := a["FilterPolicyScope"]; scope != "" && scope != "MessageAttributes" {
			s.FilterPolicyScope = scope
		}
	}
	if v := a["DeliveryPolicy"]; v != "" {
		s.DeliveryPolicy = deliveryPolicy(v)
	}
	if v := a["ReplayPolicy"]; v != "" {
		s.ReplayPolicy = document(v)
	}
	s.SubscriptionRoleArn = a["SubscriptionRoleArn"]
	if v := a["RedrivePolicy"]; v != "" {
		var rp struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		}
		if json.Unmarshal([]byte(v), &rp) == nil {
			s.Redrive = &Redrive{DeadLetterQueue: opts.shortQueue(rp.DeadLetterTargetArn)}
		}
	}
	return s
}

// YAML writes the topology in the file format.
func (t *Topology) YAML() ([]byte, error) {
	doc, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return toYAML(doc)
}

// JSON writes the topology as indented JSON, which Parse reads too.
func (t *Topology) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
