package admin_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chromedp/chromedp"

	"github.com/fanout/fanout/internal/browsertest"
	snsengine "github.com/fanout/fanout/sns"
)

// update writes the README's screenshots: go test ./internal/admin -run Chromium -update
var update = flag.Bool("update", false, "write the dashboard screenshots the README shows to docs/")

// page drives the dashboard in one tab.
type page struct {
	t *testing.T
	b *browsertest.Browser
}

func (p page) eval(js string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.b.Ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return s
}

// wait polls a JavaScript predicate; on timeout it shows what the page says.
func (p page) wait(what, js string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.b.Ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		p.t.Fatalf("waiting for %s (%s): %v\nscript errors: %q\nstatus: %s\npage: %s", what, js, err, p.b.Errors(),
			p.eval(`document.getElementById('status').textContent`), p.eval(`document.getElementById('view').innerText.slice(0, 3000)`))
	}
}

func (p page) hash(h string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`location.hash = %q, document.getElementById('view').dataset.view = 'loading', ''`, h))
}

func (p page) set(id, value string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`document.getElementById(%q).value = %q, ''`, id, value))
}

func (p page) click(sel string) {
	p.t.Helper()
	p.eval(fmt.Sprintf(`document.querySelector(%q).click(), ''`, sel))
}

func (p page) shot(dir, name string) {
	p.t.Helper()
	p.b.Screenshot(p.t, dir, name)
}

// advance moves the clock from the header and waits for the answer.
func (p page) advance(by string) {
	p.t.Helper()
	p.set("advance", by)
	p.eval(`document.getElementById('status').textContent = '', ''`)
	p.click("#advance-button")
	p.wait("the clock to move", `document.getElementById('status').textContent.startsWith('Advanced the clock by `+by+`')`)
}

// flaky is an HTTP endpoint that confirms its subscription, fails its
// first notification with 500 and takes the rest.
type flaky struct {
	notifications atomic.Int32
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var msg struct{ Type, SubscribeURL string }
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &msg)
	switch msg.Type {
	case "SubscriptionConfirmation":
		if resp, err := http.Get(msg.SubscribeURL); err == nil {
			resp.Body.Close()
		}
	case "Notification":
		if f.notifications.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
	}
}

func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 1400, 1000, 3*time.Minute)
	e := newEnv(t)
	shots := t.TempDir()
	if *update {
		shots = filepath.Join("..", "..", "docs")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// The topology, made with SDK calls as an application would.
	for _, q := range []string{"orders-eu", "audit", "jobs-dlq"} {
		e.queue(q, nil)
	}
	jobs := e.queue("jobs", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","maxReceiveCount":"1"}`})
	audit := "http://" + e.srv.Addr() + "/000000000000/audit"
	if _, err := e.sqs.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &audit, Tags: map[string]string{"owner": "</script><script>alert(2)</script>"}}); err != nil {
		t.Fatal(err)
	}
	topic, err := e.sns.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	subscribe := func(protocol, endpoint string, attrs map[string]string) string {
		out, err := e.sns.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: &protocol, Endpoint: &endpoint, Attributes: attrs, ReturnSubscriptionArn: true})
		if err != nil {
			t.Fatal(err)
		}
		return *out.SubscriptionArn
	}
	euSub := subscribe("sqs", "arn:aws:sqs:us-east-1:000000000000:orders-eu", map[string]string{"FilterPolicy": `{"store":["eu-west"]}`, "RawMessageDelivery": "true"})
	auditSub := subscribe("sqs", "arn:aws:sqs:us-east-1:000000000000:audit", nil)
	hook := httptest.NewServer(&flaky{})
	defer hook.Close()
	hookSub := subscribe("http", hook.URL+"/hook", nil)
	_ = e.srv.Deliveries().Settle(e.ctx) // the hook confirms its subscription

	p := page{t: t, b: b}
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(e.url+"/_fanout/")); err != nil {
		t.Fatal(err)
	}
	const arn = "arn:aws:sqs:us-east-1:000000000000:"
	p.wait("the topology", `!!document.querySelector('#topology svg [data-node="queue:`+arn+`audit"]')`)
	for _, n := range []string{"topic:" + *topic.TopicArn, "sub:" + euSub, "sub:" + hookSub, "queue:" + arn + "orders-eu", "queue:" + arn + "jobs", "queue:" + arn + "jobs-dlq", "ext:http:" + hook.URL + "/hook"} {
		if p.eval(fmt.Sprintf(`String(!!document.querySelector('[data-node=%q]'))`, n)) != "true" {
			t.Errorf("no node %s", n)
		}
	}
	label := func(edge string) string {
		return p.eval(fmt.Sprintf(`(document.querySelector('[data-edge-label=%q]') || {textContent: 'missing'}).textContent`, edge))
	}
	if got := label("delivery:" + auditSub); got != "0" {
		t.Errorf("audit edge before publishing: %q", got)
	}
	if got := label("redrive:" + arn + "jobs"); got != "0" {
		t.Errorf("jobs → DLQ edge: %q", got)
	}

	// Publish from the topic page: a body that would run as HTML, and an
	// attribute that the eu queue's filter policy rejects.
	xss := `<img src=x onerror=alert(1)>`
	p.hash("#/topic/orders")
	p.wait("the publish form", `!!document.getElementById('publish-form')`)
	p.set("publish-message", xss)
	p.set("publish-attributes", `{"store":{"DataType":"String","StringValue":"us-east"}}`)
	p.click("#publish")
	p.wait("the publish", `document.getElementById('status').textContent.startsWith('Published')`)
	messageID := strings.TrimPrefix(p.eval(`document.getElementById('status').textContent`), "Published ")

	p.hash("#/")
	p.wait("the audit edge to count the message", fmt.Sprintf(`(document.querySelector('[data-edge-label=%q]') || {}).textContent === '1'`, "delivery:"+auditSub))
	if got := label("sub:" + euSub); got != "0 · 1 filtered" {
		t.Errorf("eu subscription edge: %q", got)
	}
	if got := label("delivery:" + hookSub); !strings.Contains(got, "1 failed") {
		t.Errorf("hook edge: %q", got)
	}
	p.shot(shots, "dashboard-overview")

	// The message's timeline: the hook's first attempt failed and a retry
	// is scheduled; the clock moves it.
	p.hash("#/topic/orders")
	p.wait("the recent messages", fmt.Sprintf(`!!document.querySelector('#recent-messages [data-message=%q] a')`, messageID))
	p.click(fmt.Sprintf(`#recent-messages [data-message=%q] a`, messageID))
	hookCard := fmt.Sprintf(`document.querySelector('[data-subscription=%q]')`, hookSub)
	p.wait("the timeline", hookCard+` && `+hookCard+`.dataset.status === 'retrying'`)
	if got := p.eval(hookCard + `.innerText`); !strings.Contains(got, "next attempt") || !strings.Contains(got, "HTTP 500") {
		t.Errorf("retrying card: %q", got)
	}
	if got := p.eval(fmt.Sprintf(`document.querySelector('[data-subscription=%q]').dataset.status`, auditSub)); got != "delivered" {
		t.Errorf("audit delivery: %q", got)
	}
	euCard := fmt.Sprintf(`document.querySelector('[data-subscription=%q]')`, euSub)
	if got := p.eval(euCard + `.dataset.status`); got != "filtered-out" {
		t.Errorf("eu subscription: %q", got)
	}
	if got := p.eval(euCard + `.querySelector('.explain td.key.bad').textContent`); got != "store" {
		t.Errorf("failing key shown: %q", got)
	}
	if got := p.eval(euCard + `.querySelector('.explain').innerText`); !strings.Contains(got, `"us-east"`) || !strings.Contains(got, `"eu-west"`) {
		t.Errorf("explanation lacks the value and the condition: %q", got)
	}
	playground := p.eval(euCard + `.querySelector('a.playground-link').href`)
	if got := p.eval(`document.getElementById('timeline-body').textContent`); got != xss {
		t.Errorf("timeline body %q", got)
	}
	p.shot(shots, "dashboard-timeline")
	p.advance("30s")
	p.wait("the retry", hookCard+`.dataset.status === 'delivered' && `+hookCard+`.querySelectorAll('ol.timeline li').length === 2`)

	// Peek at the audit queue: the body and the tag are text, not markup.
	p.hash("#/queue/audit")
	p.wait("the message list", `document.querySelectorAll('#message-list tr[data-message]').length === 1`)
	p.click(`#message-list tr[data-message]`)
	p.wait("the message", `!!document.getElementById('message-body')`)
	var envelope struct{ Message string }
	if err := json.Unmarshal([]byte(p.eval(`document.getElementById('message-body').textContent`)), &envelope); err != nil || envelope.Message != xss {
		t.Errorf("message body shown: %q (%v)", envelope.Message, err)
	}
	if got := p.eval(`document.getElementById('tags').textContent`); !strings.Contains(got, "</script><script>alert(2)</script>") {
		t.Errorf("tags shown: %q", got)
	}
	if n := p.eval(`String(document.querySelectorAll('img, #view script').length)`); n != "0" {
		t.Errorf("%s elements made from data", n)
	}
	p.shot(shots, "dashboard-queue")
	// Peeking changed nothing.
	if attrs, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &audit, AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages"}}); err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "1" {
		t.Errorf("after peeking: %v %v", attrs, err)
	}

	// A message that fails twice lands in the DLQ; the page redrives it.
	e.send(jobs, "job-1", 0)
	if _, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &jobs, VisibilityTimeout: 1}); err != nil {
		t.Fatal(err)
	}
	p.advance("2s")
	if _, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &jobs}); err != nil {
		t.Fatal(err)
	}
	p.hash("#/queue/jobs-dlq")
	p.wait("the redrive button", `!document.getElementById('redrive').hidden && document.querySelectorAll('#message-list tr[data-message]').length === 1`)
	p.click("#redrive")
	p.wait("the confirm step", `document.getElementById('confirm').open`)
	if got := p.eval(`document.getElementById('confirm-text').textContent`); !strings.Contains(got, "redrive of jobs-dlq") {
		t.Errorf("confirm text %q", got)
	}
	p.click("#confirm-ok")
	p.wait("the redrive to start", `document.getElementById('status').textContent.startsWith('Redrive started')`)
	p.wait("the running move task", `(r => r && r.dataset.status === 'RUNNING')(document.querySelector('#move-task-list tr'))`)
	p.advance("5s")
	p.hash("#/queue/jobs")
	p.wait("the message back in jobs", `document.querySelectorAll('#message-list tr[data-message]').length === 1`)
	p.hash("#/")
	p.wait("the DLQ edge", `(document.querySelector('[data-edge-label="redrive:`+arn+`jobs"]') || {}).textContent === '1'`)

	// The clock page lists what falls due.
	e.send(jobs, "later", 120)
	p.hash("#/clock")
	p.wait("the due list", `document.querySelectorAll('#due-list tbody tr').length >= 1`)
	if got := p.eval(`document.querySelector('#due-list tbody tr').innerText`); !strings.Contains(got, "delay-ends") || !strings.Contains(got, "jobs") {
		t.Errorf("due: %q", got)
	}
	p.shot(shots, "dashboard-clock")

	// The filter explanation's link opens the playground with that policy
	// and message, which it finds no match for, on the same key.
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(playground)); err != nil {
		t.Fatal(err)
	}
	p.wait("the playground's verdict", `(v => v && !v.dataset.stale && v.dataset.state === 'no-match')(document.getElementById('verdict'))`)
	if got := p.eval(`document.getElementById('policy').value`); got != `{"store":["eu-west"]}` {
		t.Errorf("playground policy %q", got)
	}
	if got := p.eval(`[...document.querySelectorAll('#explanation tr.bad td.key')].map(e => e.textContent).join(',')`); got != "store" {
		t.Errorf("playground failing keys %q", got)
	}

	// Reset, after the confirm step, empties fanout.
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(e.url+"/_fanout/")); err != nil {
		t.Fatal(err)
	}
	p.wait("the topology", `!!document.querySelector('#topology svg')`)
	p.click("#reset")
	p.wait("the confirm step", `document.getElementById('confirm').open`)
	p.click("#confirm-cancel")
	p.wait("the dialog to close", `!document.getElementById('confirm').open`)
	if out, err := e.sqs.ListQueues(e.ctx, &sqs.ListQueuesInput{}); err != nil || len(out.QueueUrls) != 4 {
		t.Fatalf("after cancelling the reset: %v %v", out, err)
	}
	p.click("#reset")
	p.wait("the confirm step", `document.getElementById('confirm').open`)
	p.click("#confirm-ok")
	p.wait("an empty overview", `document.getElementById('view').innerText.includes('Nothing yet')`)
	if got := p.eval(`document.getElementById('status').textContent`); got != "Reset: fanout is empty." {
		t.Errorf("status after the reset: %q", got)
	}
	if out, err := e.sqs.ListQueues(e.ctx, &sqs.ListQueuesInput{}); err != nil || len(out.QueueUrls) != 0 {
		t.Fatalf("after the reset: %v %v", out, err)
	}

	if d := b.Dialogs(); len(d) > 0 {
		t.Errorf("the page opened dialogs (data ran as code?): %q", d)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}
}

// TestDashboardRendersALargeTopology draws 100 topics with 10 filtered
// subscriptions each over 1,000 queues and reports how long the overview
// takes: fetching /_fanout/graph, laying out and building the SVG and the
// tables (the page's own measure), and from navigation to a drawn page.
func TestDashboardRendersALargeTopology(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 1400, 1000, 3*time.Minute)
	e := newEnv(t)
	const topics, queues, perTopic = 100, 1000, 10
	for i := range queues {
		if _, err := e.srv.SQS().CreateQueue(fmt.Sprintf("queue-%04d", i), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range topics {
		topic, err := e.srv.SNS().CreateTopic(fmt.Sprintf("topic-%03d", i), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range perTopic {
			q := (i*perTopic + j) % queues
			if _, err := e.srv.SNS().Subscribe(snsengine.SubscribeInput{TopicArn: topic.Arn(), Protocol: "sqs",
				Endpoint:   fmt.Sprintf("arn:aws:sqs:us-east-1:000000000000:queue-%04d", q),
				Attributes: map[string]string{"FilterPolicy": fmt.Sprintf(`{"n":[%d]}`, j)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := page{t: t, b: b}
	start := time.Now()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(e.url+"/_fanout/")); err != nil {
		t.Fatal(err)
	}
	p.wait("the large topology", `document.getElementById('view').dataset.renderMs !== undefined`)
	wall := time.Since(start)
	nodes := p.eval(`String(document.querySelectorAll('#topology [data-node]').length)`)
	if want := fmt.Sprint(topics + topics*perTopic + queues); nodes != want {
		t.Errorf("%s nodes drawn, want %s", nodes, want)
	}
	first, fetch, svg := p.eval(`document.getElementById('view').dataset.renderMs`), p.eval(`document.getElementById('view').dataset.fetchMs`), p.eval(`document.getElementById('view').dataset.svgMs`)
	// The next poll finds nothing changed and draws nothing.
	p.eval(`document.getElementById('view').dataset.renderMs = '', ''`)
	p.wait("the next poll", `document.getElementById('view').dataset.renderMs !== ''`)
	idle, drawn := p.eval(`document.getElementById('view').dataset.renderMs`), p.eval(`document.getElementById('view').dataset.drawn`)
	if drawn != "unchanged" {
		t.Errorf("an idle poll redrew the page (%s)", drawn)
	}
	// A message moves a count: the next poll draws again.
	if _, err := e.srv.SNS().Publish(snsengine.PublishInput{TopicArn: e.srv.SNS().TopicArn("topic-000"), Message: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	p.eval(`document.getElementById('view').dataset.renderMs = '', ''`)
	p.wait("the redraw", `document.getElementById('view').dataset.renderMs !== '' && document.getElementById('view').dataset.drawn === 'drawn'`)
	t.Logf("100 topics, 1,000 subscriptions, 1,000 queues: first render %s ms (of which the /_fanout/graph fetch %s ms, building the SVG %s ms), %v from navigation to drawn; an idle poll %s ms; a poll that redraws %s ms (fetch %s ms)",
		first, fetch, svg, wall.Round(time.Millisecond), idle, p.eval(`document.getElementById('view').dataset.renderMs`), p.eval(`document.getElementById('view').dataset.fetchMs`))
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}
}

// TestDashboardNamespacesInChromium: the page shows every namespace, each
// row and node with its account and region; the selector narrows the views
// to one; a queue and a topic of another account are peeked, sent to and
// published to from their pages; Reset with a namespace chosen empties
// that account only.
func TestDashboardNamespacesInChromium(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 1400, 1000, 3*time.Minute)
	e := newEnv(t)
	euSQS, euSNS := e.as("111111111111", "eu-west-1")
	e.queue("orders", nil)
	euOrders := mustURL(t, euSQS, e, "orders", 0)
	topic, err := euSNS.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	euArn := "arn:aws:sqs:eu-west-1:111111111111:orders"
	if _, err := euSNS.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: &euArn}); err != nil {
		t.Fatal(err)
	}

	p := page{t: t, b: b}
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(e.url+"/_fanout/")); err != nil {
		t.Fatal(err)
	}
	defNode := `[data-node="queue:arn:aws:sqs:us-east-1:000000000000:orders"]`
	euNode := `[data-node="queue:` + euArn + `"]`
	p.wait("both namespaces' queues", `!!document.querySelector('`+defNode+`') && !!document.querySelector('`+euNode+`')`)
	if got := p.eval(`[...document.querySelectorAll('#queues tr[data-queue="orders"] td.namespace')].map(e => e.textContent).join(',')`); got != "000000000000 · us-east-1,111111111111 · eu-west-1" {
		t.Errorf("queue rows' namespaces: %q", got)
	}
	if got := p.eval(`document.querySelector('#topics tr[data-topic="events"] td.namespace').textContent`); got != "111111111111 · eu-west-1" {
		t.Errorf("topic row's namespace: %q", got)
	}
	if got := p.eval(`[...document.querySelectorAll('#namespace option')].map(o => o.value).join(',')`); got != ",000000000000/us-east-1,111111111111/eu-west-1" {
		t.Errorf("selector options: %q", got)
	}

	// Choose the other account's namespace: the default's queue goes.
	p.eval(`(s => { s.value = '111111111111/eu-west-1'; s.dispatchEvent(new Event('change')); })(document.getElementById('namespace')), ''`)
	p.wait("one namespace", `!document.querySelector('`+defNode+`') && !!document.querySelector('`+euNode+`')`)
	if n := p.eval(`String(document.querySelectorAll('#queues tbody tr').length)`); n != "1" {
		t.Errorf("%s queue rows for one namespace", n)
	}

	// Its queue's page: peek, and send from the page.
	p.click(`#queues tr[data-queue="orders"] a`)
	p.wait("the eu queue's messages", `document.querySelectorAll('#message-list tr[data-message]').length === 1`)
	if got := p.eval(`document.getElementById('queue-namespace').textContent`); got != "111111111111 · eu-west-1" {
		t.Errorf("queue page's namespace: %q", got)
	}
	p.set("send-body", "sent from the page")
	p.click("#send")
	p.wait("the send", `document.getElementById('status').textContent.startsWith('Sent')`)
	p.hash("#/topic/111111111111/eu-west-1/events")
	p.wait("the publish form", `!!document.getElementById('publish-form')`)
	p.set("publish-message", "published from the page")
	p.click("#publish")
	p.wait("the publish", `document.getElementById('status').textContent.startsWith('Published')`)
	bodies := e.receiveAll(euSQS, euOrders, 3)
	if !bodies["sent from the page"] || !bodies["in orders"] || len(bodies) != 3 {
		t.Errorf("the eu queue received %v", bodies)
	}

	// Reset with the namespace chosen: that account only.
	p.hash("#/")
	p.wait("the overview", `!!document.querySelector('`+euNode+`')`)
	p.click("#reset")
	p.wait("the confirm step", `document.getElementById('confirm').open`)
	if got := p.eval(`document.getElementById('confirm-text').textContent`); !strings.Contains(got, "Reset account 111111111111?") {
		t.Errorf("confirm text %q", got)
	}
	p.click("#confirm-ok")
	p.wait("the account's reset", `document.getElementById('status').textContent === 'Reset: account 111111111111 is empty.'`)
	if _, err := euSQS.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders")}); err == nil {
		t.Error("the eu queue survived its account's reset")
	}
	if _, err := e.sqs.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders")}); err != nil {
		t.Errorf("the default queue did not survive another account's reset: %v", err)
	}
	if d := b.Dialogs(); len(d) > 0 {
		t.Errorf("the page opened dialogs: %q", d)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}
}
