package admin_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout/internal/sdktest"
)

// as returns SDK clients signing with key (a 12-digit key id names the
// account) for region.
func (e *env) as(key, region string) (*sqs.Client, *sns.Client) {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, "secret", ""), HTTPClient: sdktest.HTTPClient()}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(e.url) }),
		sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(e.url) })
}

func mustURL(t *testing.T, c *sqs.Client, e *env, name string, delay int32) string {
	t.Helper()
	out, err := c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if delay >= 0 {
		if _, err := c.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("in " + name), DelaySeconds: delay}); err != nil {
			t.Fatal(err)
		}
	}
	return *out.QueueUrl
}

type nsRow struct {
	Name, Account, Region, Arn string
	Visible, Delayed           int
}

// TestAdminCoversEveryNamespace: the admin listings cover every (account,
// region) namespace, each row naming its account and region; ?account= and
// ?region= filter them; a queue or topic on a path is found in the
// namespace that has it (the default first, ?account=&region= to choose).
func TestAdminCoversEveryNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	euSQS, euSNS := e.as("111111111111", "eu-west-1")
	apSQS, _ := e.as("222222222222", "ap-south-1")
	e.queue("orders", nil)
	euOrders := mustURL(t, euSQS, e, "orders", 0)
	mustURL(t, euSQS, e, "dup", -1)
	mustURL(t, apSQS, e, "dup", -1)
	mustURL(t, apSQS, e, "later", 120)
	topic, err := euSNS.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	euArn := "arn:aws:sqs:eu-west-1:111111111111:orders"
	if _, err := euSNS.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: &euArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := euSNS.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String("http://127.0.0.1:9/hook")}); err != nil {
		t.Fatal(err)
	}

	var spaces struct {
		Namespaces []struct {
			Account, Region               string
			Default                       bool
			Queues, Topics, Subscriptions int
		}
	}
	e.json("GET", "/_fanout/namespaces", "", 200, &spaces)
	got := []string{}
	for _, n := range spaces.Namespaces {
		got = append(got, n.Account+"/"+n.Region+":"+strconv.Itoa(n.Queues)+","+strconv.Itoa(n.Topics)+","+strconv.Itoa(n.Subscriptions))
	}
	if strings.Join(got, " ") != "000000000000/us-east-1:1,0,0 111111111111/eu-west-1:2,1,2 222222222222/ap-south-1:2,0,0" || !spaces.Namespaces[0].Default {
		t.Fatalf("namespaces: %v", got)
	}
	e.json("GET", "/_fanout/namespaces?account=222222222222", "", 200, &spaces)
	if len(spaces.Namespaces) != 1 {
		t.Fatalf("namespaces of one account: %+v", spaces)
	}

	var page struct {
		Queues []nsRow
		Next   string
	}
	e.json("GET", "/_fanout/sqs/queues", "", 200, &page)
	rows := []string{}
	for _, q := range page.Queues {
		rows = append(rows, q.Account+"/"+q.Region+"/"+q.Name)
	}
	want := "000000000000/us-east-1/orders 111111111111/eu-west-1/dup 111111111111/eu-west-1/orders 222222222222/ap-south-1/dup 222222222222/ap-south-1/later"
	if strings.Join(rows, " ") != want {
		t.Fatalf("queues: %v", rows)
	}
	// Pages of one walk every namespace in the same order.
	rows, next := nil, ""
	for i := 0; i < 10; i++ {
		page.Next = ""
		e.json("GET", "/_fanout/sqs/queues?limit=1&next="+next, "", 200, &page)
		for _, q := range page.Queues {
			rows = append(rows, q.Account+"/"+q.Region+"/"+q.Name)
		}
		if next = page.Next; next == "" {
			break
		}
	}
	if strings.Join(rows, " ") != want {
		t.Fatalf("queues by pages of 1: %v", rows)
	}
	// A page token of a namespace that is gone goes on with those after it.
	page.Queues = nil
	e.json("GET", "/_fanout/sqs/queues?next=arn:aws:sqs:eu-west-1:111111111112:gone", "", 200, &page)
	if len(page.Queues) != 2 || page.Queues[0].Account != "222222222222" {
		t.Fatalf("after a gone namespace's token: %+v", page)
	}
	for query, n := range map[string]int{"?account=111111111111": 2, "?region=ap-south-1": 2, "?account=111111111111&region=eu-west-1": 2,
		"?account=000000000000": 1, "?account=333333333333": 0, "?region=us-west-2": 0} {
		e.json("GET", "/_fanout/sqs/queues"+query, "", 200, &page)
		if len(page.Queues) != n {
			t.Errorf("queues%s: %d, want %d", query, len(page.Queues), n)
		}
	}
	for _, bad := range []string{"?account=12", "?account=abcdefghijkl", "?region=Mars"} {
		if code, body, _ := e.call("GET", "/_fanout/sqs/queues"+bad, ""); code != 400 || !strings.Contains(body, "error") {
			t.Errorf("queues%s: %d %s, want 400", bad, code, body)
		}
	}

	// A name on a path: the default namespace's, or the one ?account=&region= pick.
	var peek peekPage
	e.json("GET", "/_fanout/sqs/queues/orders/messages", "", 200, &peek)
	if len(peek.Messages) != 0 {
		t.Fatalf("default orders: %+v", peek)
	}
	e.json("GET", "/_fanout/sqs/queues/orders/messages?account=111111111111&region=eu-west-1", "", 200, &peek)
	if len(peek.Messages) != 1 || peek.Messages[0].Body != "in orders" {
		t.Fatalf("eu orders: %+v", peek)
	}
	e.json("GET", "/_fanout/sqs/queues/later/messages", "", 200, &peek) // in one namespace only
	if len(peek.Messages) != 1 || peek.Messages[0].State != "delayed" {
		t.Fatalf("later: %+v", peek)
	}
	if code, body, _ := e.call("GET", "/_fanout/sqs/queues/dup/messages", ""); code != 400 || !strings.Contains(body, "111111111111/eu-west-1") || !strings.Contains(body, "222222222222/ap-south-1") {
		t.Fatalf("a name in two namespaces: %d %s", code, body)
	}
	if code, _, _ := e.call("GET", "/_fanout/sqs/queues/dup/messages?account=222222222222", ""); code != 200 {
		t.Fatalf("dup of one account: %d", code)
	}

	// Actions reach the namespace too, seen by that namespace's SDK client.
	e.json("POST", "/_fanout/sqs/queues/orders/send?account=111111111111&region=eu-west-1", `{"body":"from the page"}`, 200, nil)
	e.json("POST", "/_fanout/sns/topics/events/publish", `{"message":"published"}`, 200, nil)
	bodies := e.receiveAll(euSQS, euOrders, 3)
	if !bodies["from the page"] || !bodies["in orders"] || len(bodies) != 3 {
		t.Fatalf("eu orders received %v", bodies)
	}
	if code, body, _ := e.call("POST", "/_fanout/sns/topics/events/publish?account=000000000000", `{"message":"x"}`); code != 404 || !strings.Contains(body, "NotFound") {
		t.Fatalf("publish to a topic the account lacks: %d %s", code, body)
	}

	// The graph and what falls due carry account and region.
	var g struct {
		Topics []struct {
			Name, Account, Region string
			Subscriptions         []struct{ Protocol, Endpoint, Queue string }
		}
		Queues     []nsRow
		Namespaces []struct{ Account, Region string }
	}
	e.json("GET", "/_fanout/graph", "", 200, &g)
	if len(g.Topics) != 1 || g.Topics[0].Account != "111111111111" || g.Topics[0].Region != "eu-west-1" || len(g.Queues) != 5 || len(g.Namespaces) != 3 {
		t.Fatalf("graph: %+v", g)
	}
	e.json("GET", "/_fanout/graph?region=us-east-1", "", 200, &g)
	if len(g.Topics) != 0 || len(g.Queues) != 1 || len(g.Namespaces) != 3 {
		t.Fatalf("graph of us-east-1: %+v", g)
	}
	var topics struct {
		Topics []struct {
			Name, Account, Region string
			Subscriptions         []struct{ Protocol string }
		}
	}
	e.json("GET", "/_fanout/sns/topics", "", 200, &topics)
	if len(topics.Topics) != 1 || topics.Topics[0].Account != "111111111111" || topics.Topics[0].Region != "eu-west-1" || len(topics.Topics[0].Subscriptions) != 2 {
		t.Fatalf("topics: %+v", topics)
	}
	topics.Topics = nil
	e.json("GET", "/_fanout/sns/topics?account=222222222222", "", 200, &topics)
	if len(topics.Topics) != 0 {
		t.Fatalf("topics of 222222222222: %+v", topics)
	}
	var due struct {
		Due []struct{ Kind, Queue, Account, Region string }
	}
	e.json("GET", "/_fanout/clock/due?account=222222222222", "", 200, &due)
	if len(due.Due) != 1 || due.Due[0].Queue != "later" || due.Due[0].Account != "222222222222" || due.Due[0].Region != "ap-south-1" {
		t.Fatalf("due: %+v", due)
	}
	due.Due = nil
	e.json("GET", "/_fanout/clock/due?account=111111111111", "", 200, &due)
	for _, d := range due.Due { // the messages received above, and the http endpoint's retry
		if d.Kind == "visibility-ends" && d.Account != "111111111111" || d.Kind == "delay-ends" {
			t.Fatalf("due of 111111111111: %+v", due)
		}
	}
	// The delivery records and counts pick a namespace by their topic's.
	var recs struct{ Deliveries []struct{ TopicArn string } }
	e.json("GET", "/_fanout/deliveries?account=111111111111&region=eu-west-1", "", 200, &recs)
	if len(recs.Deliveries) == 0 {
		t.Fatal("no deliveries of 111111111111/eu-west-1")
	}
	recs.Deliveries = nil
	e.json("GET", "/_fanout/deliveries?account=000000000000", "", 200, &recs)
	if len(recs.Deliveries) != 0 {
		t.Fatalf("deliveries of an account without topics: %+v", recs)
	}
	var stats struct {
		Subscriptions []struct{ SubscriptionArn string }
	}
	e.json("GET", "/_fanout/sns/deliveries?region=eu-west-1", "", 200, &stats)
	if len(stats.Subscriptions) != 2 {
		t.Fatalf("counts of eu-west-1: %+v", stats)
	}
	stats.Subscriptions = nil
	e.json("GET", "/_fanout/sns/deliveries?region=us-east-1", "", 200, &stats)
	if len(stats.Subscriptions) != 0 {
		t.Fatalf("counts of us-east-1: %+v", stats)
	}
	// The outbox likewise: an email subscription of the eu topic.
	if _, err := euSNS.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("email-json"), Endpoint: aws.String("ops@example.com")}); err != nil {
		t.Fatal(err)
	}
	// LocalStack's SMS listing picks the namespace by accountId and region.
	if _, err := euSNS.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sms"), Endpoint: aws.String("+15555550100")}); err != nil {
		t.Fatal(err)
	}
	e.json("POST", "/_fanout/sns/topics/events/publish", `{"message":"by sms"}`, 200, nil)
	var sms struct {
		SMS map[string][]struct{ Message string } `json:"sms_messages"`
	}
	e.json("GET", "/_aws/sns/sms-messages?accountId=111111111111&region=eu-west-1", "", 200, &sms)
	if len(sms.SMS["+15555550100"]) != 1 || sms.SMS["+15555550100"][0].Message != "by sms" {
		t.Fatalf("sms of 111111111111/eu-west-1: %+v", sms)
	}
	sms.SMS = nil
	e.json("GET", "/_aws/sns/sms-messages", "", 200, &sms)
	if len(sms.SMS) != 0 {
		t.Fatalf("sms of the default namespace: %+v", sms)
	}
	var outbox struct{ Messages []struct{ TopicArn string } }
	e.json("GET", "/_fanout/sns/outbox?account=111111111111", "", 200, &outbox)
	if len(outbox.Messages) == 0 || outbox.Messages[0].TopicArn != *topic.TopicArn {
		t.Fatalf("outbox of 111111111111: %+v", outbox)
	}
	outbox.Messages = nil
	e.json("GET", "/_fanout/sns/outbox?region=ap-south-1", "", 200, &outbox)
	if len(outbox.Messages) != 0 {
		t.Fatalf("outbox of ap-south-1: %+v", outbox)
	}
	for _, bad := range []string{"/_fanout/deliveries?account=1", "/_fanout/sns/deliveries?region=x", "/_fanout/sns/outbox?account=x"} {
		if code, _, _ := e.call("GET", bad, ""); code != 400 {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}

	// The http and email subscriptions of another namespace wait for confirmation.
	var pending struct {
		Pending []struct{ SubscriptionArn, Endpoint string }
	}
	e.json("GET", "/_fanout/sns/pending", "", 200, &pending)
	if len(pending.Pending) != 2 || !strings.Contains(pending.Pending[0].SubscriptionArn+pending.Pending[1].SubscriptionArn, ":eu-west-1:111111111111:events:") {
		t.Fatalf("pending: %+v", pending)
	}
}

// TestMoveTasksOfEveryNamespace: GET /_fanout/sqs/movetasks lists the move
// tasks of every namespace's queues with their account and region.
func TestMoveTasksOfEveryNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eu, _ := e.as("111111111111", "eu-west-1")
	mustURL(t, eu, e, "jobs-dlq", 0)
	if _, err := eu.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs"), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:111111111111:jobs-dlq","maxReceiveCount":"1"}`}}); err != nil {
		t.Fatal(err)
	}
	start, err := eu.StartMessageMoveTask(e.ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String("arn:aws:sqs:eu-west-1:111111111111:jobs-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tasks []struct {
			Queue, Account, Region, Status, TaskHandle string
			ToMove                                     int
		}
	}
	e.json("GET", "/_fanout/sqs/movetasks", "", 200, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].Queue != "jobs-dlq" || list.Tasks[0].Account != "111111111111" || list.Tasks[0].Region != "eu-west-1" ||
		list.Tasks[0].Status != "RUNNING" || list.Tasks[0].TaskHandle != *start.TaskHandle || list.Tasks[0].ToMove != 1 {
		t.Fatalf("move tasks: %+v", list)
	}
	list.Tasks = nil
	e.json("GET", "/_fanout/sqs/movetasks?account=000000000000", "", 200, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("move tasks of the default account: %+v", list)
	}
}

// receiveAll waits for the deliveries in progress (a publish's to a queue
// runs on a worker), then receives from queue until it has seen n distinct
// bodies or five receives came back, and returns the bodies seen.
func (e *env) receiveAll(client *sqs.Client, queue string, n int) map[string]bool {
	e.t.Helper()
	if err := e.srv.Deliveries().Settle(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	bodies := map[string]bool{}
	for i := 0; i < 5 && len(bodies) < n; i++ {
		out, err := client.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &queue, MaxNumberOfMessages: 10})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, m := range out.Messages {
			bodies[*m.Body] = true
		}
	}
	return bodies
}
