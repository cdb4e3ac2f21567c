package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Subscription filter policies, end to end: one topic fans out to one queue
// per policy, every message is published once, and each queue must receive
// exactly the messages its policy matches. Each message carries its id in
// the message attribute fpIDAttr, read back from the SNS envelope.
//
// Expected outcomes follow the worked cases of the filter-policy spec; "#n"
// in a comment is that spec's example number. Every message reaches every
// subscription, so a case's expected set also says what its policy does
// with the messages written for the other cases.
//
// Negative outcomes on AWS, where delivery is asynchronous: after the
// messages, each queue gets a "tail" (a copy of a message its policy
// matches) published last; once a queue has its expected messages and its
// tail, one more receive catches stragglers, and the received set must be
// exactly the expected one.

const fpIDAttr = "mid"

// fpMsg is a message to publish: an id (sent as the fpIDAttr attribute), a
// body, and attributes besides the id.
type fpMsg struct {
	id    string
	body  string
	attrs map[string]snstypes.MessageAttributeValue
}

// fpCase is a subscription's filter policy and the ids of the messages it
// must receive.
type fpCase struct {
	name   string
	scope  string // FilterPolicyScope; "" leaves the default (MessageAttributes)
	policy string // FilterPolicy; "" sets none
	want   []string
	// Also expected: every message without this attribute.
	absent string
	// Also expected: every message.
	all bool
}

type fpAttrs = map[string]snstypes.MessageAttributeValue

func fpTyped(dataType, v string) snstypes.MessageAttributeValue {
	return snstypes.MessageAttributeValue{DataType: aws.String(dataType), StringValue: aws.String(v)}
}

func fpStr(v string) snstypes.MessageAttributeValue { return fpTyped("String", v) }
func fpNum(v string) snstypes.MessageAttributeValue { return fpTyped("Number", v) }
func fpArr(v string) snstypes.MessageAttributeValue { return fpTyped("String.Array", v) }
func fpBin(b []byte) snstypes.MessageAttributeValue {
	return snstypes.MessageAttributeValue{DataType: aws.String("Binary"), BinaryValue: b}
}

// fpAttrMsg is a message for attribute-scope policies; its body is not JSON,
// so no body-scope policy matches it.
func fpAttrMsg(id string, attrs fpAttrs) fpMsg {
	return fpMsg{id: id, body: "attribute message " + id, attrs: attrs}
}

// fpBodyMsg is a message for body-scope policies, with no attribute but its id.
func fpBodyMsg(id, body string) fpMsg {
	return fpMsg{id: id, body: body}
}

// fpMessages is everything the main spec publishes.
func fpMessages() []fpMsg {
	return []fpMsg{
		// customer_interests, shared by the exact, prefix, suffix,
		// equals-ignore-case and anything-but policies.
		fpAttrMsg("ci-rugby", fpAttrs{"customer_interests": fpStr("rugby")}),
		fpAttrMsg("ci-baseball", fpAttrs{"customer_interests": fpStr("baseball")}),
		fpAttrMsg("ci-arr-rugby-tennis", fpAttrs{"customer_interests": fpArr(`["rugby","tennis"]`)}),
		fpAttrMsg("ci-arr-baseball", fpAttrs{"customer_interests": fpArr(`["baseball"]`)}),
		fpAttrMsg("ci-basketball", fpAttrs{"customer_interests": fpStr("basketball")}),
		fpAttrMsg("ci-football", fpAttrs{"customer_interests": fpStr("football")}),
		fpAttrMsg("ci-RUGBY", fpAttrs{"customer_interests": fpStr("RUGBY")}),
		fpAttrMsg("ev-order_number", fpAttrs{"event": fpStr("order_number")}),
		fpAttrMsg("ev-order-cancelled", fpAttrs{"event": fpStr("order-cancelled")}),
		fpAttrMsg("ip-10-0-0-255", fpAttrs{"source_ip": fpStr("10.0.0.255")}),
		fpAttrMsg("ip-10-1-1-0", fpAttrs{"source_ip": fpStr("10.1.1.0")}),
		fpAttrMsg("pu-3.015e2", fpAttrs{"price_usd": fpNum("3.015e2")}),
		fpAttrMsg("pu-minus-3", fpAttrs{"price_usd": fpNum("-3")}),
		fpAttrMsg("pu-150", fpAttrs{"price_usd": fpNum("150")}),
		fpAttrMsg("pu-0", fpAttrs{"price_usd": fpNum("0")}),
		fpAttrMsg("pu-99", fpAttrs{"price_usd": fpNum("99")}),
		fpAttrMsg("pu-111", fpAttrs{"price_usd": fpNum("111")}),
		fpAttrMsg("pr-100.1", fpAttrs{"price": fpNum("100.1")}),
		fpAttrMsg("pr-100", fpAttrs{"price": fpNum("100")}),
		fpAttrMsg("pr-500", fpAttrs{"price": fpNum("500")}),
		fpAttrMsg("st-store-def", fpAttrs{"store": fpNum("99"), "def": fpNum("99")}),
		fpAttrMsg("st-def", fpAttrs{"def": fpNum("99")}),
		fpAttrMsg("st-value1", fpAttrs{"store": fpStr("value1")}),
		fpAttrMsg("st-arr-value1-value2", fpAttrs{"store": fpArr(`["value1","value2"]`)}),
		fpAttrMsg("st-arr-value2-value3", fpAttrs{"store": fpArr(`["value2","value3"]`)}),
		fpAttrMsg("a1-other", fpAttrs{"attr1": fpStr("other")}),
		fpAttrMsg("a1-whatever", fpAttrs{"attr1": fpStr("whatever")}),
		fpAttrMsg("no-attributes", nil),
		fpAttrMsg("blob-binary-base64", fpAttrs{"blob": fpBin([]byte{2, 3, 4})}), // base64 AgME
		fpAttrMsg("blob-binary-text", fpAttrs{"blob": fpBin([]byte("AgME"))}),
		fpAttrMsg("blob-string", fpAttrs{"blob": fpStr("AgME")}),
		fpAttrMsg("and-red-12", fpAttrs{"color": fpStr("red"), "size": fpNum("12")}),
		fpAttrMsg("and-red-5", fpAttrs{"color": fpStr("red"), "size": fpNum("5")}),
		fpAttrMsg("and-red", fpAttrs{"color": fpStr("red")}),
		fpAttrMsg("and-12", fpAttrs{"size": fpNum("12")}),
		fpAttrMsg("or-blue", fpAttrs{"color": fpStr("blue")}),
		fpAttrMsg("or-1", fpAttrs{"size": fpNum("1")}),
		fpAttrMsg("or-green-7", fpAttrs{"color": fpStr("green"), "size": fpNum("7")}),

		fpBodyMsg("b33", `{"object":{"key":"auto-test"}}`),
		fpBodyMsg("b34", `{"object":{"key":"hardcodedvalue"}}`),
		fpBodyMsg("b35", `{"object":{"key":"test-auto"}}`),
		fpBodyMsg("b36", `{"object":{"key":"auto-test"},"test":"just-exists"}`),
		fpBodyMsg("b37", `{"object":{"key":"auto-test","nested_key":"just-exists"}}`),
		fpBodyMsg("b38", `{"test":"auto-test"}`),
		fpBodyMsg("b39-not-json", `Regular string message`),
		fpBodyMsg("b40-json-string", `"Regular string message"`),
		fpBodyMsg("b-ci-tennis", `{"customer_interests":"tennis"}`),
		fpBodyMsg("b-ci-arr-rugby-baseball", `{"customer_interests":["rugby","baseball"]}`),
		fpBodyMsg("b-ci-arr-baseball", `{"customer_interests":["baseball"]}`),
		fpBodyMsg("b-ci-arr-rugby", `{"customer_interests":["rugby"]}`),
		fpBodyMsg("b-route-queue1-queue2", `{"headers":{"route-to":["queue1","queue2"]}}`),
		fpBodyMsg("b-route-queue3", `{"headers":{"route-to":["queue3"]}}`),
		fpBodyMsg("b-total-150", `{"order":{"total":150}}`),
		fpBodyMsg("b-total-1.5e2", `{"order":{"total":1.5e2}}`),
		fpBodyMsg("b-total-200", `{"order":{"total":200}}`),
		fpBodyMsg("b-total-string", `{"order":{"total":"150"}}`),
		fpBodyMsg("b-price-arr-100-50", `{"price":[100,50]}`),
		fpBodyMsg("b-price-100", `{"price":100}`),
		fpBodyMsg("b-price-arr-100-500", `{"price":[100,500]}`),
		fpBodyMsg("b-dot-nested", `{"object":{"nested":"string.value"}}`),
		fpBodyMsg("b-dot-flat", `{"object.nested":"string.value"}`),
		fpBodyMsg("b-dot-mixed", `{"object.nested":{"test":"string.value"}}`),
		fpBodyMsg("b-empty-string", `{"resources":[],"detail":{"eventVersion":"","responseElements":null}}`),
		fpBodyMsg("b-s3-created", `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventName":"ObjectCreated:Put",`+
			`"s3":{"bucket":{"name":"uploads"},"object":{"key":"auto-insurance-2314.xml","size":1}}}]}`),
		fpBodyMsg("b-s3-removed", `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventName":"ObjectRemoved:Delete",`+
			`"s3":{"bucket":{"name":"uploads"},"object":{"key":"auto-insurance-2314.xml"}}}]}`),
		fpBodyMsg("b-or-namespace-source", `{"namespace":"AWS/EC2","detail":{"scope":"Service","source":"aws.cloudwatch"}}`),
		fpBodyMsg("b-or-metric-only", `{"metricName":"CPUUtilization","detail":{"scope":"Service"}}`),
		fpBodyMsg("b-or-type-only", `{"metricName":"AWS/EC2","detail":{"scope":"Service","type":"CloudWatch Alarm State Change"}}`),
		fpBodyMsg("b-ip-10-0-0-255", `{"detail":{"sourceIPAddress":"10.0.0.255"}}`),
		fpBodyMsg("b-ip-10-0-0-256", `{"detail":{"sourceIPAddress":"10.0.0.256"}}`),
		fpBodyMsg("b-ipv6-in", `{"detail":{"sourceIPAddressV6":"2001:0db8:1234:1a00:0000:0000:0000:0000"}}`),
		fpBodyMsg("b-ipv6-out", `{"detail":{"sourceIPAddressV6":"2001:0db8:123f:1a01:0000:0000:0000:0000"}}`),
	}
}

// fpCases is one subscription per policy, for the messages of fpMessages.
func fpCases() []fpCase {
	const body = "MessageBody"
	return []fpCase{
		// Attribute scope.
		{name: "exact", policy: `{"customer_interests":["rugby","tennis"]}`,
			// #1–#4: a String.Array matches through any element; case-sensitive.
			want: []string{"ci-rugby", "ci-arr-rugby-tennis"}},
		{name: "string-array", policy: `{"store":["value1"]}`,
			// #30–#32
			want: []string{"st-value1", "st-arr-value1-value2"}},
		{name: "prefix", policy: `{"customer_interests":[{"prefix":"bas"}]}`,
			// #6, #7
			want: []string{"ci-baseball", "ci-arr-baseball", "ci-basketball"}},
		{name: "suffix", policy: `{"customer_interests":[{"suffix":"ball"}]}`,
			want: []string{"ci-baseball", "ci-arr-baseball", "ci-basketball", "ci-football"}},
		{name: "equals-ignore-case", policy: `{"customer_interests":[{"equals-ignore-case":"RuGbY"}]}`,
			want: []string{"ci-rugby", "ci-arr-rugby-tennis", "ci-RUGBY"}},
		{name: "anything-but", policy: `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`,
			// #8, #9; never a message without the attribute. An array
			// whose elements are all excluded does not match.
			want: []string{"ci-baseball", "ci-arr-baseball", "ci-basketball", "ci-football", "ci-RUGBY"}},
		{name: "anything-but-prefix", policy: `{"event":[{"anything-but":{"prefix":"order-"}}]}`,
			// #12, #13
			want: []string{"ev-order_number"}},
		{name: "cidr", policy: `{"source_ip":[{"cidr":"10.0.0.0/24"}]}`,
			// #14, #15
			want: []string{"ip-10-0-0-255"}},
		{name: "numeric-equals", policy: `{"price_usd":[{"numeric":["=",301.5]}]}`,
			// #16
			want: []string{"pu-3.015e2"}},
		{name: "numeric-less", policy: `{"price_usd":[{"numeric":["<",0]}]}`,
			// #20
			want: []string{"pu-minus-3"}},
		{name: "numeric-range", policy: `{"price_usd":[{"numeric":[">",0,"<=",150]}]}`,
			// #21–#24
			want: []string{"pu-150", "pu-99", "pu-111"}},
		{name: "anything-but-numbers", policy: `{"price":[{"anything-but":[100,500]}]}`,
			// #17, #18
			want: []string{"pr-100.1"}},
		{name: "exists", policy: `{"store":[{"exists":true}]}`,
			// #26, #27
			want: []string{"st-store-def", "st-value1", "st-arr-value1-value2", "st-arr-value2-value3"}},
		{name: "not-exists", policy: `{"store":[{"exists":false}]}`,
			// #28, #29: every message without store, whatever its body.
			absent: "store"},
		{name: "null-or-anything-but", policy: `{"attr1":[null,{"anything-but":"whatever"}]}`,
			// #25: null does not match a missing attribute.
			want: []string{"a1-other"}},
		{name: "binary", policy: `{"blob":["AgME",{"prefix":"Ag"}]}`,
			// Binary attributes are not compared, by their base64 or their bytes.
			want: []string{"blob-string"}},
		{name: "and", policy: `{"color":["red"],"size":[{"numeric":[">=",10]}]}`,
			want: []string{"and-red-12"}},
		{name: "or", policy: `{"$or":[{"color":["blue"]},{"size":[{"numeric":["<",3]}]}]}`,
			want: []string{"or-blue", "or-1"}},
		{name: "unfiltered", all: true},

		// Body scope: only the JSON-object bodies can match.
		{name: "body-exact", scope: body, policy: `{"customer_interests":["rugby","tennis"]}`,
			// #5; a body array matches through any element.
			want: []string{"b-ci-tennis", "b-ci-arr-rugby-baseball", "b-ci-arr-rugby"}},
		{name: "body-anything-but", scope: body, policy: `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`,
			// #10, #11: a body array matches if any element is not excluded.
			want: []string{"b-ci-arr-rugby-baseball", "b-ci-arr-baseball"}},
		{name: "body-nested", scope: body,
			policy: `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`,
			// #33–#40
			want: []string{"b33", "b34"}},
		{name: "body-array", scope: body, policy: `{"headers":{"route-to":["queue1"]}}`,
			// #44, #45
			want: []string{"b-route-queue1-queue2"}},
		{name: "body-numeric", scope: body, policy: `{"order":{"total":[{"numeric":[">=",100,"<",200]}]}}`,
			// A JSON string is not a number.
			want: []string{"b-total-150", "b-total-1.5e2"}},
		{name: "body-anything-but-numbers", scope: body, policy: `{"price":[{"anything-but":[100,500]}]}`,
			// #19
			want: []string{"b-price-arr-100-50"}},
		{name: "body-dotted-key", scope: body, policy: `{"object.nested":["string.value"]}`,
			// #41, #42
			want: []string{"b-dot-nested", "b-dot-flat"}},
		{name: "body-dotted-key-mixed", scope: body, policy: `{"object.nested.test":["string.value"]}`,
			// #43
			want: []string{"b-dot-mixed"}},
		{name: "body-empty-string", scope: body, policy: `{"detail":{"eventVersion":[""]}}`,
			// #51
			want: []string{"b-empty-string"}},
		{name: "body-array-of-objects", scope: body,
			policy: `{"Records":{"s3":{"object":{"key":[{"prefix":"auto-"}]}},"eventName":[{"prefix":"ObjectCreated:"}]}}`,
			// #46, #47
			want: []string{"b-s3-created"}},
		{name: "body-or", scope: body,
			policy: `{"$or":[{"metricName":["CPUUtilization","ReadLatency"]},{"namespace":["AWS/EC2","AWS/ES"]}],` +
				`"detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change"]}]}}`,
			// #48–#50
			want: []string{"b-or-namespace-source"}},
		{name: "body-cidr", scope: body,
			policy: `{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}`,
			// #52–#55
			want: []string{"b-ip-10-0-0-255", "b-ipv6-in"}},
	}
}

// fpPublish publishes msgs in order, ten to a PublishBatch.
func fpPublish(ctx context.Context, topic string, msgs []fpMsg) {
	GinkgoHelper()
	for i := 0; i < len(msgs); i += 10 {
		batch := msgs[i:min(i+10, len(msgs))]
		entries := make([]snstypes.PublishBatchRequestEntry, len(batch))
		for j, m := range batch {
			attrs := fpAttrs{fpIDAttr: fpStr(m.id)}
			maps.Copy(attrs, m.attrs)
			entries[j] = snstypes.PublishBatchRequestEntry{
				Id: aws.String(fmt.Sprint("entry", j)), Message: aws.String(m.body), MessageAttributes: attrs,
			}
		}
		out, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: entries})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Failed).To(BeEmpty())
		Expect(out.Successful).To(HaveLen(len(batch)))
	}
}

// fpReceive receives up to ten messages from q, deletes them, and returns
// their ids. They are hidden for two seconds only: if a response is lost
// (the SDK then retries the receive), its messages come back to a later
// receive rather than staying hidden for the rest of the spec.
func fpReceive(ctx context.Context, q queue, wait int32) ([]string, error) {
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: wait, VisibilityTimeout: 2,
	})
	if err != nil || len(out.Messages) == 0 {
		return nil, err
	}
	ids := make([]string, len(out.Messages))
	entries := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
	for i, m := range out.Messages {
		ids[i] = fpID(m)
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("entry", i)), ReceiptHandle: m.ReceiptHandle}
	}
	// A message whose delete fails comes back, and counts once.
	_, err = client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
	return ids, err
}

// fpID is the id in the envelope's message attributes.
func fpID(m types.Message) string {
	var env struct {
		MessageAttributes map[string]struct{ Value string }
	}
	body := aws.ToString(m.Body)
	if err := json.Unmarshal([]byte(body), &env); err != nil || env.MessageAttributes[fpIDAttr].Value == "" {
		return "<no id in " + body + ">"
	}
	return env.MessageAttributes[fpIDAttr].Value
}

// fpDrain receives from q until every id in want has arrived (or settle has
// passed), then once more for stragglers, and returns the ids received.
func fpDrain(ctx context.Context, q queue, want []string) (map[string]bool, error) {
	got := map[string]bool{}
	receive := func(wait int32) error {
		ids, err := fpReceive(ctx, q, wait)
		for _, id := range ids {
			got[id] = true
		}
		return err
	}
	deadline := time.Now().Add(settle)
	for !fpHasAll(got, want) && time.Now().Before(deadline) {
		if err := receive(1); err != nil {
			return got, err
		}
	}
	return got, receive(emptyWait)
}

func fpHasAll(got map[string]bool, want []string) bool {
	for _, id := range want {
		if !got[id] {
			return false
		}
	}
	return true
}

// fpControl reports whether id is a probe or a tail rather than one of the
// messages under test.
func fpControl(id string) bool {
	return strings.HasPrefix(id, "probe-") || strings.HasPrefix(id, "tail-")
}

// fpDiff describes how got (less probes and tails) differs from want, or
// returns "".
func fpDiff(got map[string]bool, want []string) string {
	var missing, extra []string
	for _, id := range want {
		if !got[id] {
			missing = append(missing, id)
		}
	}
	for id := range got {
		if !fpControl(id) && !slices.Contains(want, id) {
			extra = append(extra, id)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(extra)
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("missing %q", missing))
	}
	if len(extra) > 0 {
		parts = append(parts, fmt.Sprintf("unexpected %q", extra))
	}
	return strings.Join(parts, ", ")
}

// fpTarget is a subscribed queue, what it must receive, and a message its
// policy matches (the template for its probes and its tail).
type fpTarget struct {
	name   string
	policy string
	q      queue
	want   []string
	sample fpMsg
}

func (t fpTarget) copy(id string) fpMsg {
	return fpMsg{id: id, body: t.sample.body, attrs: t.sample.attrs}
}

// fpWarmUp publishes probes until every target's queue has received its
// own: AWS starts delivering to a new subscription, or applies a changed
// one, after a moment (fanout at once).
func fpWarmUp(ctx context.Context, topic string, targets []fpTarget) {
	GinkgoHelper()
	pending := slices.Clone(targets)
	Eventually(func(g Gomega) {
		probes := make([]fpMsg, len(pending))
		for i, t := range pending {
			probes[i] = t.copy("probe-" + t.name)
		}
		fpPublish(ctx, topic, probes)
		var still []fpTarget
		var names []string
		for _, t := range pending {
			ids, err := fpReceive(ctx, t.q, 1)
			g.Expect(err).NotTo(HaveOccurred())
			if !slices.Contains(ids, "probe-"+t.name) {
				still = append(still, t)
				names = append(names, t.name)
			}
		}
		pending = still
		g.Expect(names).To(BeEmpty(), "no probe arrived yet")
	}).WithContext(ctx).Should(Succeed())
}

// fpExpect publishes msgs and then each target's tail, and asserts that each
// target's queue receives exactly its want set.
func fpExpect(ctx context.Context, topic string, targets []fpTarget, msgs []fpMsg) {
	GinkgoHelper()
	fpPublish(ctx, topic, msgs)
	tails := make([]fpMsg, len(targets))
	for i, t := range targets {
		tails[i] = t.copy("tail-" + t.name)
	}
	fpPublish(ctx, topic, tails)

	report := make([]string, len(targets))
	drain := func(i int, t fpTarget) {
		got, err := fpDrain(ctx, t.q, append(slices.Clone(t.want), "tail-"+t.name))
		switch {
		case err != nil:
			report[i] = fmt.Sprintf("%s: %v", t.name, err)
		case !got["tail-"+t.name]:
			report[i] = fmt.Sprintf("%s %s: tail never arrived; %s", t.name, t.policy, fpDiff(got, t.want))
		default:
			if d := fpDiff(got, t.want); d != "" {
				report[i] = fmt.Sprintf("%s %s: %s", t.name, t.policy, d)
			}
		}
	}
	// On AWS every drain ends in a long poll, so queues are drained in
	// parallel. fanout answers at once, and its Server.Close waits for
	// connections that never carried a request, which concurrent SDK calls
	// can leave behind, so there they are drained in turn.
	var wg sync.WaitGroup
	for i, t := range targets {
		if onAWS {
			wg.Go(func() { drain(i, t) })
		} else {
			drain(i, t)
		}
	}
	wg.Wait()
	Expect(slices.DeleteFunc(report, func(s string) bool { return s == "" })).To(BeEmpty())
}

// fpSubscribe subscribes a queue with the case's policy and works out the
// ids it must receive from msgs.
func fpSubscribe(ctx context.Context, topic string, c fpCase, msgs []fpMsg) fpTarget {
	GinkgoHelper()
	byID := map[string]fpMsg{}
	for _, m := range msgs {
		byID[m.id] = m
	}
	want := slices.Clone(c.want)
	for _, m := range msgs {
		_, has := m.attrs[c.absent]
		if c.all || c.absent != "" && !has {
			want = append(want, m.id)
		}
	}
	Expect(want).NotTo(BeEmpty(), c.name)
	for _, id := range want {
		Expect(byID).To(HaveKey(id), c.name)
	}
	attrs := map[string]string{}
	if c.policy != "" {
		attrs["FilterPolicy"] = c.policy
	}
	if c.scope != "" {
		attrs["FilterPolicyScope"] = c.scope
	}
	q, _ := subscribedQueue(ctx, topic, "filter-"+c.name, nil, attrs)
	return fpTarget{name: c.name, policy: c.policy, q: q, want: want, sample: byID[want[0]]}
}

// fpSetSubAttr sets one subscription attribute.
func fpSetSubAttr(ctx context.Context, sub, name, value string) error {
	_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
		SubscriptionArn: aws.String(sub), AttributeName: aws.String(name), AttributeValue: aws.String(value),
	})
	return err
}

// fpExpectSubAttrs waits for the subscription's attributes to satisfy m: AWS
// may show a change only after a moment.
func fpExpectSubAttrs(ctx context.Context, sub string, m OmegaMatcher) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		out, err := snsc(ctx).GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Attributes).To(m)
	}).WithContext(ctx).Should(Succeed())
}

// fpErrorProblem checks that err is InvalidParameter with message want. AWS
// may append the JSON parser's location ("\n at [Source: ...]") to it.
func fpErrorProblem(err error, want string) string {
	switch {
	case err == nil:
		return "accepted"
	case apiError(err) == nil || apiError(err).ErrorCode() != "InvalidParameter":
		return fmt.Sprintf("want InvalidParameter, got %v", err)
	}
	got := errorMessage(err)
	if got != want && !strings.HasPrefix(got, want+"\n at [Source: ") {
		return fmt.Sprintf("message %q, want %q", got, want)
	}
	return ""
}

var _ = Describe("SNS subscription filter policies", Label("sns-filter"), func() {
	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-subscription-filter-policies.html; https://docs.aws.amazon.com/sns/latest/dg/string-value-matching.html; https://docs.aws.amazon.com/sns/latest/dg/numeric-value-matching.html.
	It("delivers to each subscription exactly the messages its policy matches, by attributes or by body", func(ctx SpecContext) {
		topic := createTopic(ctx, "filter", nil)
		msgs := fpMessages()
		seen := map[string]bool{}
		for _, m := range msgs {
			Expect(seen).NotTo(HaveKey(m.id), "duplicate message id")
			seen[m.id] = true
		}
		var targets []fpTarget
		for _, c := range fpCases() {
			targets = append(targets, fpSubscribe(ctx, topic, c, msgs))
		}
		fpWarmUp(ctx, topic, targets)
		fpExpect(ctx, topic, targets, msgs)
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-message-filtering-scope.html.
	It("switches a live subscription from attribute to body filtering, and delivers everything once the policy is emptied", func(ctx SpecContext) {
		topic := createTopic(ctx, "scope", nil)
		const policy = `{"kind":["widget"]}`
		q, sub := subscribedQueue(ctx, topic, "scope", nil, map[string]string{"FilterPolicy": policy})
		// Matched by the attribute only, by the body only, by neither.
		byAttr := func(id string) fpMsg {
			return fpMsg{id: id, body: `{"kind":"gadget"}`, attrs: fpAttrs{"kind": fpStr("widget")}}
		}
		byBody := func(id string) fpMsg {
			return fpMsg{id: id, body: `{"kind":"widget"}`, attrs: fpAttrs{"kind": fpStr("gadget")}}
		}
		neither := func(id string) fpMsg {
			return fpMsg{id: id, body: `{"kind":"gadget"}`, attrs: fpAttrs{"kind": fpStr("gadget")}}
		}
		round := func(n int) []fpMsg {
			return []fpMsg{byAttr(fmt.Sprint("attr-", n)), byBody(fmt.Sprint("body-", n)), neither(fmt.Sprint("neither-", n))}
		}
		target := func(n int, sample func(string) fpMsg, want ...string) []fpTarget {
			return []fpTarget{{name: fmt.Sprint("round-", n), policy: policy, q: q, want: want, sample: sample("")}}
		}

		fpExpectSubAttrs(ctx, sub, HaveKeyWithValue("FilterPolicyScope", "MessageAttributes"))
		fpWarmUp(ctx, topic, target(1, byAttr))
		fpExpect(ctx, topic, target(1, byAttr, "attr-1"), round(1))

		Expect(fpSetSubAttr(ctx, sub, "FilterPolicyScope", "MessageBody")).To(Succeed())
		fpExpectSubAttrs(ctx, sub, And(HaveKeyWithValue("FilterPolicyScope", "MessageBody"), HaveKeyWithValue("FilterPolicy", MatchJSON(policy))))
		// AWS applies the change after a moment: probe until a message
		// matched by its body gets through.
		fpWarmUp(ctx, topic, target(2, byBody))
		fpExpect(ctx, topic, target(2, byBody, "body-2"), round(2))

		Expect(fpSetSubAttr(ctx, sub, "FilterPolicy", "")).To(Succeed())
		fpExpectSubAttrs(ctx, sub, Not(HaveKey("FilterPolicy")))
		fpWarmUp(ctx, topic, target(3, neither))
		fpExpect(ctx, topic, target(3, neither, "attr-3", "body-3", "neither-3"), round(3))
	})

	// Evidence: localstack tests/aws/services/sns/test_sns_filter_policy.snapshot.json (recorded against AWS), the validation tests.
	It("rejects invalid policies with InvalidParameter and AWS's message, keeping the one in force", func(ctx SpecContext) {
		topic := createTopic(ctx, "badfilter", nil)
		q := createQueue(ctx, "badfilter-subscribe", nil)
		const good = `{"store":["example_corp"]}`
		_, sub := subscribedQueue(ctx, topic, "badfilter-set", nil, map[string]string{"FilterPolicy": good})

		many := make([]string, 151)
		for i := range many {
			many[i] = fmt.Sprintf(`"v%d"`, i)
		}
		// Messages as AWS words them after "FilterPolicy: ".
		cases := []struct{ policy, message string }{
			{`{"key":[["value"]]}`, "Match value must be String, number, true, false, or null"},
			{`{"key":[{"wrong-operator":true}]}`, "Unrecognized match type wrong-operator"},
			{`{"key":[{"suffix":"value","prefix":"value2"}]}`, "Only one key allowed in match expression"},
			{`{"key":[]}`, "Empty arrays are not allowed"},
			{`{"key_a":"value_one"}`, `"key_a" must be an object or an array`},
			{`{"key":[{"suffix":100}]}`, "suffix match pattern must be a string"},
			{`{"key":[{"cidr":"bad-filter"}]}`, "Malformed CIDR, one '/' required"},
			{`{"key":[{"cidr":"bad-filter/24"}]}`, "Nonstandard IP address: bad-filter"},
			{`{"key":[{"numeric":[">",3,"<",1]}]}`, "Bottom must be less than top"},
			{`{"key":[{"numeric":[">",20,"<",30,"<",50]}]}`, "Too many terms in numeric range expression"},
			{`{"key":[{"numeric":["=","000"]}]}`, "Value of equals must be numeric"},
			{`{"key":[{"exists":"no"}]}`, "exists match pattern must be either true or false."},
			{`{"key":[{"anything-but":{"suffix":"test"}}]}`, "Unsupported anything-but pattern: suffix"},
			{`{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, "Filter policy can not have more than 5 keys"},
			{`{"key":[` + strings.Join(many, ",") + `]}`, "Filter policy is too complex"},
		}
		var problems []string
		for _, c := range cases {
			_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{
				TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
				Attributes: map[string]string{"FilterPolicy": c.policy},
			})
			if p := fpErrorProblem(err, "Invalid parameter: Attributes Reason: FilterPolicy: "+c.message); p != "" {
				problems = append(problems, "Subscribe "+c.policy+": "+p)
			}
			err = fpSetSubAttr(ctx, sub, "FilterPolicy", c.policy)
			if p := fpErrorProblem(err, "Invalid parameter: FilterPolicy: "+c.message); p != "" {
				problems = append(problems, "SetSubscriptionAttributes "+c.policy+": "+p)
			}
		}
		// Recorded for SetSubscriptionAttributes only.
		err := fpSetSubAttr(ctx, sub, "FilterPolicy", `{"object":{"key":[{"prefix":"auto-"}]}}`)
		if p := fpErrorProblem(err, "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"); p != "" {
			problems = append(problems, "nested policy in attribute scope: "+p)
		}
		err = fpSetSubAttr(ctx, sub, "FilterPolicyScope", "RandomValue")
		if p := fpErrorProblem(err, "Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or MessageAttributes"); p != "" {
			problems = append(problems, "FilterPolicyScope RandomValue: "+p)
		}
		err = fpSetSubAttr(ctx, sub, "FilterPolicy", `{invalid`)
		if err == nil || !strings.HasPrefix(errorMessage(err), "Invalid parameter: FilterPolicy: failed to parse JSON.") {
			problems = append(problems, fmt.Sprintf("malformed JSON: %v", err))
		}
		Expect(problems).To(BeEmpty())

		fpExpectSubAttrs(ctx, sub, And(HaveKeyWithValue("FilterPolicy", MatchJSON(good)), HaveKeyWithValue("FilterPolicyScope", "MessageAttributes")))
		// No failed Subscribe left a subscription behind.
		out, err := snsc(ctx).ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
		Expect(err).NotTo(HaveOccurred())
		var endpoints []string
		for _, s := range out.Subscriptions {
			endpoints = append(endpoints, aws.ToString(s.Endpoint))
		}
		Expect(endpoints).NotTo(ContainElement(q.ARN))
	})
})
