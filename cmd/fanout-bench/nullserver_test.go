package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func newNullServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(nullHandler([]int{100}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNullServerAcceptedBySDK drives the null server through the real
// aws-sdk-go-v2 clients, whose MD5 validation would fail on a wrong digest.
func TestNullServerAcceptedBySDK(t *testing.T) {
	srv := newNullServer(t)
	ctx := context.Background()
	c := newSDKClient(srv.URL, newSDKHTTPClient(2))

	q, arn, err := c.createQueue(ctx, "q1", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(q, "/000000000000/q1") || arn != "arn:aws:sqs:us-east-1:000000000000:q1" {
		t.Fatalf("queue url %q arn %q", q, arn)
	}
	body := "hello \"null\" ☃\n" + payload(1000)
	out, err := c.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: &body})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if aws.ToString(out.MD5OfMessageBody) != md5Hex(body) {
		t.Fatalf("MD5 %q", aws.ToString(out.MD5OfMessageBody))
	}
	es := batchOf(10, 300)
	es[3].body = "quote\" backslash \\ tab\t snowman ☃ </script>"
	if err := c.sendMessageBatch(ctx, q, es); err != nil {
		t.Fatalf("SendMessageBatch: %v", err)
	}
	for n := 1; n <= 10; n++ {
		msgs, err := c.receiveMessage(ctx, q, n, 0)
		if err != nil {
			t.Fatalf("ReceiveMessage(%d): %v", n, err)
		}
		if len(msgs) != n {
			t.Fatalf("ReceiveMessage(%d) returned %d messages", n, len(msgs))
		}
		if err := c.deleteMessageBatch(ctx, q, receipts(msgs)); err != nil {
			t.Fatalf("DeleteMessageBatch: %v", err)
		}
	}
	if err := c.deleteQueue(ctx, q); err != nil {
		t.Fatal(err)
	}

	topic, err := c.createTopic(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if topic != "arn:aws:sns:us-east-1:000000000000:t1" {
		t.Fatalf("topic arn %q", topic)
	}
	if err := c.subscribeQueue(ctx, topic, arn); err != nil {
		t.Fatal(err)
	}
	if err := c.publish(ctx, topic, "hi & <bye>", nil); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := c.deleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
}

// TestSDKRejectsWrongMD5 shows the SDK's check is live, so the test above
// means something: a response with a wrong digest must fail.
func TestSDKRejectsWrongMD5(t *testing.T) {
	inner := nullHandler([]int{100})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(bytes.ReplaceAll(rec.Body.Bytes(), []byte(md5Hex("x")), []byte(md5Hex("y"))))
	}))
	defer srv.Close()
	c := newSDKClient(srv.URL, newSDKHTTPClient(1))
	q := srv.URL + "/000000000000/q"
	err := c.sendMessage(context.Background(), q, entry{body: "x"})
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "checksum") {
		t.Fatalf("want checksum error, got %v", err)
	}
}

func TestNullServerRawClient(t *testing.T) {
	srv := newNullServer(t)
	ctx := context.Background()
	c := &rawClient{hc: newHTTPClient(2), endpoint: srv.URL}
	q := srv.URL + "/000000000000/q.fifo"
	if err := c.sendMessage(ctx, q, entry{body: "a", groupID: "g", dedupID: "d"}); err != nil {
		t.Fatal(err)
	}
	if err := c.sendMessageBatch(ctx, q, batchOf(10, 10)); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.receiveMessage(ctx, q, 10, 0)
	if err != nil || len(msgs) != 10 {
		t.Fatalf("receive: %d, %v", len(msgs), err)
	}
	if err := c.deleteMessageBatch(ctx, q, receipts(msgs)); err != nil {
		t.Fatal(err)
	}
	if err := c.publish(ctx, "arn:aws:sns:us-east-1:000000000000:t", "m&m=1", nil); err != nil {
		t.Fatal(err)
	}
	// Malformed requests are errors, not canned successes.
	if _, err := c.sqsCall(ctx, "SendMessage", []byte("{bad json")); err == nil {
		t.Fatal("bad JSON accepted")
	}
	resp, err := http.Get(srv.URL + "/_fanout/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "ctl\x00\x1f\t\r\n", "uni ☃ é", "bad \xff utf8", "<&>"} {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want, _ := json.Marshal(s)
		var wantS string
		json.Unmarshal(want, &wantS)
		if got != wantS {
			t.Errorf("%q round-trips to %q, want %q", s, got, wantS)
		}
	}
}

func TestStamp(t *testing.T) {
	pad := payload(100)
	before := time.Now()
	b := stampedBody(pad)
	if len(b) != 100 {
		t.Fatalf("stamped body has %d bytes", len(b))
	}
	ts, ok := stampOf(b)
	if !ok || ts.Before(before.Truncate(time.Nanosecond)) || ts.After(time.Now()) {
		t.Fatalf("stamp %v ok=%v", ts, ok)
	}
	env, _ := json.Marshal(map[string]string{"Type": "Notification", "Message": b})
	if ts2, ok := stampOf(string(env)); !ok || !ts2.Equal(ts) {
		t.Fatalf("envelope stamp %v ok=%v", ts2, ok)
	}
	if _, ok := stampOf("null message 1"); ok {
		t.Fatal("unstamped body parsed")
	}
}

// TestScenariosAgainstNull runs every scenario briefly with both client kinds
// against an in-process null server.
func TestScenariosAgainstNull(t *testing.T) {
	srv := newNullServer(t)
	cfg := &config{clients: 3, duration: 150 * time.Millisecond, warmup: 30 * time.Millisecond,
		size: 256, queued: 500, groups: []int{1, 7}, subs: []int{2}, filtered: []int{5}, sinkFail: []float64{0}, window: 16}
	for _, s := range scenarios {
		cfg.scenarios = append(cfg.scenarios, s.name)
	}
	tgt := &target{name: "null", endpoint: srv.URL}
	sdk := newSDKClient(srv.URL, newSDKHTTPClient(cfg.clients))
	raw := &rawClient{hc: newHTTPClient(cfg.clients), endpoint: srv.URL}
	for _, v := range cfg.variants() {
		if v.sc.fanoutOnly {
			continue
		}
		for kind, dp := range map[string]dataPlane{kindSDK: sdk, kindHTTP: raw} {
			e := &env{cfg: cfg, tgt: tgt, kind: kind, dp: dp, ctl: sdk, fill: raw, prefix: "t-" + queueSafe(v.name), param: v.param, size: v.size}
			res, err := runOne(context.Background(), v, e)
			if err != nil {
				t.Fatalf("%s/%s: %v", v.name, kind, err)
			}
			p := res.Ops[v.sc.primary]
			if p == nil || p.calls == 0 || p.messages == 0 {
				t.Fatalf("%s/%s: no %s calls: %+v", v.name, kind, v.sc.primary, res.Ops)
			}
			for op, st := range res.Ops {
				if st.errors > 0 {
					t.Errorf("%s/%s: %s: %d errors, first: %s", v.name, kind, op, st.errors, st.firstErr)
				}
			}
			if res.ServerCPU != -1 || res.ServerSys != -1 {
				t.Errorf("in-process target should have no server CPU figure")
			}
		}
	}
	var names []string
	for _, v := range cfg.variants() {
		names = append(names, v.name)
	}
	want := "send/256B send-batch/256B fill/256B drain/256B fifo-send-receive/groups=1/256B fifo-send-receive/groups=7/256B " +
		"publish/subs=2/256B publish-envelope/subs=2/256B publish-filtered/unfiltered/256B publish-filtered/filtered=5/256B http-delivery/256B http-delivery-signed/256B"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("variants\n got %s\nwant %s", got, want)
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHideWriterTo checks the SDK transport never hands net/http a request
// body with WriteTo (see newSDKHTTPClient) and leaves the caller's request alone.
func TestHideWriterTo(t *testing.T) {
	var sawWriterTo bool
	rt := hideWriterTo{rtFunc(func(r *http.Request) (*http.Response, error) {
		_, sawWriterTo = r.Body.(io.WriterTo)
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})}
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", io.NopCloser(strings.NewReader("x")))
	orig := req.Body
	if _, ok := orig.(io.WriterTo); !ok {
		t.Fatal("test body should implement WriterTo")
	}
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if sawWriterTo {
		t.Error("transport saw a body with WriteTo")
	}
	if req.Body != orig {
		t.Error("caller's request was modified")
	}
}

func TestScanJSON(t *testing.T) {
	doc := `{ "QueueUrl" : "http://h/000000000000/q", "MaxNumberOfMessages":10,
		"Attributes":{"A":"1"}, "Flag":true, "Nil":null, "List":[1,"x",{"In":"arr"}],
		"Entries":[{"Id":"a","MessageBody":"x\"y\u00e9","MessageAttributes":{"k":{"DataType":"String"}}},{"Id":"b","MessageBody":""}]}`
	type m struct {
		depth    int
		key, raw string
	}
	var got []m
	var ends []int
	if err := scanJSON([]byte(doc), func(d int, k, r []byte) { got = append(got, m{d, string(k), string(r)}) },
		func(d int) { ends = append(ends, d) }); err != nil {
		t.Fatal(err)
	}
	want := []m{
		{1, "QueueUrl", `"http://h/000000000000/q"`}, {1, "MaxNumberOfMessages", "10"},
		{2, "A", `"1"`}, {1, "Flag", "true"}, {1, "Nil", "null"}, {2, "In", `"arr"`},
		{2, "Id", `"a"`}, {2, "MessageBody", `"x\"y\u00e9"`}, {4, "DataType", `"String"`},
		{2, "Id", `"b"`}, {2, "MessageBody", `""`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d = %v, want %v", i, got[i], want[i])
		}
	}
	if s, ok := jsonString([]byte(`"x\"y\u00e9"`)); !ok || s != "x\"yé" {
		t.Errorf("jsonString = %q %v", s, ok)
	}
	if len(ends) != 7 || ends[len(ends)-1] != 1 {
		t.Errorf("object ends %v", ends)
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `{"a" 1}`, `{"a":1,}`, `{"a":"x}`, `[1 2]`, `{"a":1}x`, `{a:1}`} {
		if err := scanJSON([]byte(bad), nil, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{`{}`, `[]`, ` {"a":[]} `, `"s"`, `1`} {
		if err := scanJSON([]byte(good), nil, nil); err != nil {
			t.Errorf("%q rejected: %v", good, err)
		}
	}
}

// TestHelloAndNullIDs checks the hello handler's reply satisfies the plain
// client and the null server gives each message its own id.
func TestHelloAndNullIDs(t *testing.T) {
	hello := httptest.NewServer(helloHandler())
	defer hello.Close()
	ctx := context.Background()
	es := batchOf(10, 64)
	if err := (&rawClient{hc: newHTTPClient(1), endpoint: hello.URL}).sendMessageBatch(ctx, hello.URL+"/q", es); err != nil {
		t.Fatalf("hello: %v", err)
	}
	srv := newNullServer(t)
	body := `{"QueueUrl":"q","Entries":[{"Id":"a","MessageBody":"x"},{"Id":"b","MessageBody":"x"}]}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessageBatch")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Successful []struct{ Id, MessageId, MD5OfMessageBody string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Successful) != 2 {
		t.Fatalf("%v %+v", err, out)
	}
	a, b := out.Successful[0], out.Successful[1]
	if a.MessageId == b.MessageId || len(a.MessageId) != 36 || a.MD5OfMessageBody != md5Hex("x") {
		t.Errorf("entries %+v", out.Successful)
	}
}

func TestCutSize(t *testing.T) {
	for in, want := range map[string][2]string{
		"send/64B": {"send", "64B"}, "publish-filtered/filtered=5/1024B": {"publish-filtered/filtered=5", "1024B"},
		"send": {"send", ""}, "a/xB": {"a/xB", ""},
	} {
		if b, s := cutSize(in); b != want[0] || s != want[1] {
			t.Errorf("cutSize(%q) = %q, %q", in, b, s)
		}
	}
}

// TestNullProfile checks that the null server's profile listener serves
// what --cpu-profile fetches from fanout: a gzipped pprof profile.
func TestNullProfile(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go serveProfile(l)
	path := filepath.Join(t.TempDir(), "null.pprof")
	if got := fetchProfile(context.Background(), "http://"+l.Addr().String(), 1, path); !strings.Contains(got, path) {
		t.Fatalf("fetchProfile: %s", got)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("not a gzipped profile: % x", b[:min(len(b), 8)])
	}
}
