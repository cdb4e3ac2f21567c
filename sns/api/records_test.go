package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/delivery"
	snsengine "github.com/fanout/fanout/sns"
)

// recordsReply is a GET /_fanout/deliveries reply.
type recordsReply struct {
	Deliveries []delivery.Record
	Messages   []delivery.MessageView
	Dropped    int64
	Next       string
}

func (e *env) recordsPage(t *testing.T, query string) recordsReply {
	t.Helper()
	code, body := get(t, e.srv.URL()+"/_fanout/deliveries?"+query)
	if code != http.StatusOK {
		t.Fatalf("GET /_fanout/deliveries?%s: %d %s", query, code, body)
	}
	var out recordsReply
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return out
}

func TestEveryPublishHasARecordPerSubscriptionWithTheFilterExplanation(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	all, corp, body := e.queue(t, "all", nil), e.queue(t, "corp", nil), e.queue(t, "body", nil)
	allSub := e.subscribe(t, topic, all, nil)
	corpSub := e.subscribe(t, topic, corp, map[string]string{"FilterPolicy": `{"store":["example_corp"],"price":[{"numeric":[">",10]}]}`})
	bodySub := e.subscribe(t, topic, body, map[string]string{"FilterPolicyScope": "MessageBody", "FilterPolicy": `{"order":{"kind":["gift"]}}`})
	out := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(`{"order":{"kind":"book"}}`),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"store": strAttr("example_corp"),
			"price": {DataType: aws.String("Number"), StringValue: aws.String("5")},
		}})
	id := aws.ToString(out.MessageId)

	recs := e.srv.Deliveries().Deliveries(id)
	if len(recs) != 3 {
		t.Fatalf("%d records, want one per subscription: %+v", len(recs), recs)
	}
	bySub := map[string]delivery.Record{}
	for _, r := range recs {
		bySub[r.SubscriptionArn] = r
	}
	if r := bySub[allSub]; r.Status != delivery.StatusDelivered || r.Filter != nil {
		t.Fatalf("unfiltered %+v", r)
	}
	c := bySub[corpSub]
	if c.Status != delivery.StatusFiltered || c.FilterScope != "MessageAttributes" || c.Filter == nil || c.Filter.Matched {
		t.Fatalf("attribute-filtered %+v", c)
	}
	var price, store bool
	for _, k := range c.Filter.Branches[0].Keys {
		switch k.Key {
		case "price":
			price = !k.Matched && k.Values[0] == "5" && k.Conditions[0] == `{"numeric":[">",10]}` && k.Reason != ""
		case "store":
			store = k.Matched && k.MatchedValue == `"example_corp"`
		}
	}
	if !price || !store {
		t.Fatalf("explanation %+v", c.Filter.Branches)
	}
	b := bySub[bodySub]
	if b.Status != delivery.StatusFiltered || b.FilterScope != "MessageBody" || b.Filter == nil ||
		b.Filter.Branches[0].Keys[0].Key != "order.kind" || b.Filter.Branches[0].Keys[0].Values[0] != `"book"` {
		t.Fatalf("body-filtered %+v", b)
	}
	if n := e.subStats(t, corpSub).Filtered; n != 1 {
		t.Fatalf("filtered count %d", n)
	}

	// The admin API shows the same, with the message itself.
	page := e.recordsPage(t, "message="+id)
	if len(page.Deliveries) != 3 || len(page.Messages) != 1 {
		t.Fatalf("page %+v", page)
	}
	m := page.Messages[0]
	if m.MessageID != id || m.Body != `{"order":{"kind":"book"}}` || len(m.Attributes) != 2 || m.BodyTruncated {
		t.Fatalf("message %+v", m)
	}
	if got := e.recordsPage(t, "topic="+topic+"&status=filtered-out"); len(got.Deliveries) != 2 || got.Deliveries[0].Filter == nil {
		t.Fatalf("by topic %+v", got)
	}
}

func TestRecordsAndOutboxPage(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	e.subscribe(t, topic, q, nil)
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sms"), Endpoint: aws.String("+15555550100")}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 25; i++ {
		ids = append(ids, aws.ToString(e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(fmt.Sprint("m", i))}).MessageId))
	}
	var got []string
	next := ""
	for pages := 0; ; pages++ {
		p := e.recordsPage(t, "topic="+topic+"&type=Notification&limit=10&next="+next)
		if pages > 10 || len(p.Deliveries) > 10 {
			t.Fatalf("paging runs away: %+v", p)
		}
		for _, r := range p.Deliveries {
			if r.Protocol == "sqs" {
				got = append(got, r.MessageID)
			}
		}
		if next = p.Next; next == "" {
			break
		}
	}
	if len(got) != 25 || got[0] != ids[24] || got[24] != ids[0] {
		t.Fatalf("paged through %d records: %v", len(got), got)
	}

	var bodies []string
	next = ""
	for {
		_, raw := get(t, e.srv.URL()+"/_fanout/sns/outbox?limit=7&next="+next)
		var p struct {
			Messages []delivery.OutboxEntry
			Next     string
		}
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Messages {
			bodies = append(bodies, m.Body)
		}
		if next = p.Next; next == "" {
			break
		}
	}
	if len(bodies) != 25 || bodies[0] != "m24" || bodies[24] != "m0" {
		t.Fatalf("outbox pages %v", bodies)
	}

	for _, bad := range []string{"/_fanout/deliveries?limit=abc", "/_fanout/deliveries?limit=0", "/_fanout/deliveries?status=bogus",
		"/_fanout/deliveries?next=x", "/_fanout/sns/outbox?limit=100000", "/_fanout/sns/deliveries?limit=-1", "/_fanout/sns/pending?limit=x"} {
		if code, body := get(t, e.srv.URL()+bad); code != http.StatusBadRequest || !strings.Contains(body, `"error"`) {
			t.Errorf("GET %s: %d %s", bad, code, body)
		}
	}
}

// 3,000 publishes of 256 KiB to an outbox endpoint and a subscription that
// filters them all out: what fanout keeps of them stays within its byte
// budget, and one outbox listing is a page, never the lot.
func TestRecordsAndOutboxStayWithinTheirByteBudget(t *testing.T) {
	e := start(t, fanout.Options{})
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	e.subscribe(t, topic, q, map[string]string{"FilterPolicy": `{"never":["matches"]}`})
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("firehose"),
		Endpoint:   aws.String("arn:aws:firehose:us-east-1:000000000000:deliverystream/s"),
		Attributes: map[string]string{"SubscriptionRoleArn": "arn:aws:iam::000000000000:role/r", "RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	const n, size = 3000, 256 << 10
	pad := strings.Repeat("x", size-8)
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("%08d", i) + pad // a string of its own each time, as from the wire
		if _, err := e.srv.SNS().Publish(snsengine.PublishInput{TopicArn: topic, Message: &body}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > 3*delivery.DefaultRecordBytes {
		t.Fatalf("%d MiB of heap after %d publishes of %d KiB (budget %d MiB)", ms.HeapAlloc>>20, n, size>>10, delivery.DefaultRecordBytes>>20)
	}
	t.Logf("heap %d MiB after %d publishes", ms.HeapAlloc>>20, n)
	resp, err := http.Get(e.srv.URL() + "/_fanout/sns/outbox?limit=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Messages []delivery.OutboxEntry
		Dropped  int64
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if len(raw) > delivery.DefaultRecordBytes || len(p.Messages) == 0 || p.Dropped == 0 {
		t.Fatalf("outbox reply of %d MiB, %d entries, %d dropped", len(raw)>>20, len(p.Messages), p.Dropped)
	}
	if m := p.Messages[0]; !m.BodyTruncated || m.BodySize != size || len(m.Body) >= size || !strings.HasPrefix(m.Body, fmt.Sprintf("%08d", n-1)) {
		t.Fatalf("newest entry: truncated %v, size %d, kept %d", m.BodyTruncated, m.BodySize, len(m.Body))
	}
	if d := e.recordsPage(t, "limit=1"); d.Dropped == 0 || len(d.Messages) != 1 || !d.Messages[0].BodyTruncated {
		t.Fatalf("records: %d dropped, %+v", d.Dropped, d.Messages)
	}
}
