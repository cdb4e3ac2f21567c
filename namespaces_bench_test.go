package fanout_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fanout/fanout"
)

// BenchmarkNamespaces measures what accounts cost a call: plain-HTTP
// SendMessage (JSON 1.0) and Publish (Query, one SQS subscription) over
// loopback, with the traffic of one account, or spread over 100 accounts
// (each its own queue and topic, raw delivery), on one server in one run. Calls carry a
// well-formed SigV4 Authorization header naming the account as its access
// key id; fanout checks signatures only with --credentials.
//
//	go test -run '^$' -bench Namespaces -benchtime 10000x .
func BenchmarkNamespaces(b *testing.B) {
	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const most = 100
	accounts := make([]string, most)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("%012d", 100000000000+i)
		if status := post(s.URL(), accounts[i], "sqs", "", "Action=CreateQueue&Version=2012-11-05&QueueName=bench"); status != 200 {
			b.Fatalf("create queue: %d", status)
		}
		if status := post(s.URL(), accounts[i], "sns", "", "Action=CreateTopic&Version=2010-03-31&Name=bench"); status != 200 {
			b.Fatalf("create topic: %d", status)
		}
		topic := "arn:aws:sns:us-east-1:" + accounts[i] + ":bench"
		form := url.Values{"Action": {"Subscribe"}, "Version": {"2010-03-31"}, "TopicArn": {topic}, "Protocol": {"sqs"},
			"Endpoint": {"arn:aws:sqs:us-east-1:" + accounts[i] + ":bench"},
			// Raw: an envelope's RSA signature would cost 20 times the call.
			"Attributes.entry.1.key": {"RawMessageDelivery"}, "Attributes.entry.1.value": {"true"}}
		if status := post(s.URL(), accounts[i], "sns", "", form.Encode()); status != 200 {
			b.Fatalf("subscribe: %d", status)
		}
	}
	// Rounds alternate the two, so drift on a shared machine (and queues
	// growing) falls on both alike.
	for _, n := range []int{1, most, 1, most, 1, most} {
		b.Run(fmt.Sprintf("SendMessage/accounts=%d", n), func(b *testing.B) {
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					a := accounts[int(next.Add(1))%n]
					body := `{"QueueUrl":"` + s.URL() + "/" + a + `/bench","MessageBody":"hello"}`
					if st := post(s.URL(), a, "sqs", "AmazonSQS.SendMessage", body); st != 200 {
						b.Fatalf("status %d", st)
					}
				}
			})
		})
		b.Run(fmt.Sprintf("Publish/accounts=%d", n), func(b *testing.B) {
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					a := accounts[int(next.Add(1))%n]
					body := "Action=Publish&Version=2010-03-31&Message=hello&TopicArn=" + url.QueryEscape("arn:aws:sns:us-east-1:"+a+":bench")
					if st := post(s.URL(), a, "sns", "", body); st != 200 {
						b.Fatalf("status %d", st)
					}
				}
			})
		})
	}
	// Keep the queues from growing without bound across runs.
	_ = s.Reset()
}

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// post sends one call, JSON 1.0 when target is set, else Query, with an
// unverified SigV4 header whose access key id is account.
func post(base, account, service, target, body string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(body))
	if target != "" {
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", target)
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+account+"/20260101/us-east-1/"+service+
		"/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000")
	resp, err := benchClient.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestMemoryPerAccount reports the heap an account costs: empty (a read in
// an account that never created anything keeps nothing), and after its
// first queue and topic.
func TestMemoryPerAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory")
	}
	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n = 1000
	before := heap()
	for i := range n {
		a := fmt.Sprintf("%012d", 200000000000+i)
		if st := post(s.URL(), a, "sqs", "AmazonSQS.ListQueues", "{}"); st != 200 {
			t.Fatalf("list: %d", st)
		}
	}
	read := heap()
	for i := range n {
		a := fmt.Sprintf("%012d", 200000000000+i)
		if st := post(s.URL(), a, "sqs", "", "Action=CreateQueue&Version=2012-11-05&QueueName=q"); st != 200 {
			t.Fatalf("create: %d", st)
		}
	}
	used := heap()
	for i := range n {
		a := fmt.Sprintf("%012d", 200000000000+i)
		if st := post(s.URL(), a, "sns", "", "Action=CreateTopic&Version=2010-03-31&Name=t"); st != 200 {
			t.Fatalf("create topic: %d", st)
		}
	}
	both := heap()
	perRead := (int64(read) - int64(before)) / n
	t.Logf("per account: only read %d B; after its first queue %d B; and a topic %d B more", perRead,
		(int64(used)-int64(read))/n, (int64(both)-int64(used))/n)
	if perRead > 1024 { // a kept namespace costs more than 1 KB; allow for heap noise
		t.Errorf("an account that was only read keeps %d bytes", perRead)
	}
}
