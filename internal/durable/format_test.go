package durable

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// The bytes on disk are a format: this pins them, so that renaming a field
// of the engine's state types (which would make old data dirs unreadable)
// fails here rather than at a user's restart.
func TestSNSRecordsAreFormat1(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := sns.Change{
		Reset:          true,
		DeletedTopics:  []string{"old"},
		Unsubscribed:   []sns.SubscriptionState{{Topic: "t", Arn: "arn:aws:sns:us-east-1:1:t:u1"}},
		ForgottenDedup: []sns.DedupState{{Topic: "f.fifo", Key: "g\x00d/1"}},
		Unarchived:     []sns.ArchivedState{{Topic: "f.fifo", SequenceNumber: "10000000000000000001"}},
		Topics: []sns.TopicState{{Name: "t", Attributes: map[string]string{"DisplayName": "D"},
			Tags: map[string]string{"k": "v"}, SubscriptionsDeleted: 1}},
		Subscriptions: []sns.SubscriptionState{{Topic: "t", Arn: "arn:aws:sns:us-east-1:1:t:u2", Protocol: "https",
			Endpoint: "https://x", Seq: 2, Token: "ab", Pending: true, Attributes: map[string]string{}}},
		Sequences: []sns.TopicSequence{{Topic: "f.fifo", Sequence: 7}},
		Dedup:     []sns.DedupState{{Topic: "f.fifo", Key: "d", MessageID: "m", SequenceNumber: "10000000000000000007", At: at}},
		Archived: []sns.ArchivedState{{Topic: "f.fifo", At: at, ID: "m", Body: "b", Timestamp: at,
			Attributes: []delivery.Attribute{{Name: "a", DataType: "String", StringValue: "v"}}, GroupID: "g", SequenceNumber: "10000000000000000007"}},
	}
	recs, err := snsRecords("sns/1/us-east-1/", c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		line := string(rune('0'+r.Op)) + " " + string(r.Key)
		if r.Value != nil {
			line += " " + string(rune('0'+r.Value[0])) + string(r.Value[1:])
		}
		got = append(got, line)
	}
	want := []string{
		`3 sns/1/us-east-1/`,
		`2 sns/1/us-east-1/topic/old`,
		`3 sns/1/us-east-1/topic/old/`,
		`2 sns/1/us-east-1/topic/t/sub/u1`,
		"2 sns/1/us-east-1/topic/f.fifo/dedup/g\x00d/1",
		`2 sns/1/us-east-1/topic/f.fifo/archive/10000000000000000001`,
		`1 sns/1/us-east-1/topic/t 1{"Name":"t","Fifo":false,"Attributes":{"DisplayName":"D"},"Tags":{"k":"v"},"SubscriptionsDeleted":1}`,
		`1 sns/1/us-east-1/topic/t/sub/u2 1{"Topic":"t","Arn":"arn:aws:sns:us-east-1:1:t:u2","Protocol":"https","Endpoint":"https://x","Seq":2,"Token":"ab","Pending":true,"Authenticated":false,"AuthenticateOnUnsubscribe":false,"Attributes":{},"ReplayStatus":""}`,
		`1 sns/1/us-east-1/topic/f.fifo/seq 1{"Topic":"f.fifo","Sequence":7}`,
		`1 sns/1/us-east-1/topic/f.fifo/dedup/d 1{"Topic":"f.fifo","Key":"d","MessageID":"m","SequenceNumber":"10000000000000000007","At":"2026-03-01T12:00:00Z"}`,
		`1 sns/1/us-east-1/topic/f.fifo/archive/10000000000000000007 1{"Topic":"f.fifo","At":"2026-03-01T12:00:00Z","ID":"m","Subject":"","Timestamp":"2026-03-01T12:00:00Z","Body":"b","PerProtocol":null,"Attributes":[{"Name":"a","DataType":"String","StringValue":"v","BinaryValue":null}],"GroupID":"g","DedupID":"","SequenceNumber":"10000000000000000007","SignatureVersion":"","DisplayName":""}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// And they decode back into the state they came from.
	r := NewRecovered()
	for _, rec := range recs[6:] {
		if err := r.Load(rec.Key, rec.Value); err != nil {
			t.Fatal(err)
		}
	}
	st := r.SNS(Namespace{"1", "us-east-1"})
	if len(st.Topics) != 1 || len(st.Subscriptions) != 1 || len(st.Sequences) != 1 || len(st.Dedup) != 1 || len(st.Archived) != 1 ||
		st.Archived[0].Attributes[0].StringValue != "v" || !st.Dedup[0].At.Equal(at) || st.Subscriptions[0].Token != "ab" {
		t.Errorf("decoded %+v", st)
	}
}

func TestUnknownKeysAndValuesAreRefused(t *testing.T) {
	r := NewRecovered()
	for _, kv := range [][2]string{
		{"sqs/1/r/queue/q", "\x01{}"}, // a state without its name
		{"sqs/1/r/other/q", "\x01{}"},
		{"sqs/1/r/queue/q/x/1", "\x01{}"},
		{"sqs/1/r/queue/q/m/12", "\x01"},
		{"sqs/1/r/queue/q/s/0000000000000001", "\x01\x01\x07"},
		{"sqs/1/r/queue/q/s/0000000000000001", "\x02\x01\x00\x00\x00\x00\x00\x00\x00"},
		{"sqs/1/r/queue/q/m/0000000000000001", "\x01short"},
		{"sqs//r/queue/q", "\x01{}"},
		{"sns/1/r/topic/t/other/x", "\x01{}"},
		{"sns/1/r/topic/t", "\x02{}"},
		{"sns/1/r/topic/t", "\x01{"},
		{"sns/1/r/topic/t", ""},
	} {
		if err := r.Load([]byte(kv[0]), []byte(kv[1])); err == nil {
			t.Errorf("Load(%q, %q) accepted it", kv[0], kv[1])
		}
	}
}

// The SQS records, pinned as the SNS ones are: keys, JSON for queues and
// rare records, the binary layout of messages, statuses and dedup ids.
func TestSQSRecordsAreFormat1(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	status := sqs.MessageStatus{Queue: "f.fifo", Seq: 2, Order: 3, State: sqs.MessageInflight, VisibleAt: 1000,
		ReceivedAt: 900, FirstReceiveAt: 7, ReceiveCount: 3, ReceivesBefore: 1, HandleGen: 2}
	c := sqs.Change{
		Reset:          true,
		DeletedQueues:  []string{"old"},
		Purged:         []string{"p"},
		Removed:        []sqs.MessageRef{{Queue: "q", Seq: 1}},
		ForgottenDedup: []sqs.DedupState{{Queue: "f.fifo", Key: "g\x00d/1"}},
		ForgottenNames: []string{"q"},
		Queues: []sqs.QueueState{{Name: "q", UID: 9, Attributes: map[string]string{"DelaySeconds": "0"},
			Tags: map[string]string{"k": "v"}, Created: at, Modified: at, SeqCeiling: 65536}},
		Messages: []sqs.MessageRecord{{Queue: "f.fifo", Seq: 2, MessageID: "00000000-0000-4000-8000-000000000001",
			MD5OfBody: "0cc175b9c0f1b6a831c399e269772661", Body: "a",
			Attributes:             []sqs.MessageAttribute{{Name: "n", DataType: "Binary", BinaryValue: []byte{1}}},
			MD5OfMessageAttributes: "11111111111111111111111111111111", SenderID: "S", AWSTraceHeader: "T", GroupID: "g",
			DeduplicationID: "d", SequenceNumber: "18000000000000004096", DeadLetterSourceArn: "arn", SentAt: 800, Status: status}},
		Statuses:     []sqs.MessageStatus{status},
		Dedup:        []sqs.DedupState{{Queue: "f.fifo", Key: "d", MessageID: "m", SequenceNumber: "18000000000000004096", At: at}},
		Attempts:     []sqs.AttemptState{{Queue: "f.fifo", ID: "try", At: at, Seqs: []uint64{2}, Gens: []uint32{2}, AttributeNames: []string{"All"}}},
		DeletedNames: []sqs.DeletedName{{Name: "old", At: at}},
		MoveTasks:    []sqs.MoveTaskState{{Handle: "h", Task: sqs.MoveTask{Status: "RUNNING", SourceArn: "s", Rate: 1, ToMove: 2, Started: at}}},
	}
	recs, err := sqsRecords("sqs/1/us-east-1/", c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		line := string(rune('0'+r.Op)) + " " + string(r.Key)
		if r.Value != nil {
			line += " " + strconv.Quote(string(r.Value))
		}
		got = append(got, line)
	}
	want := []string{
		`3 sqs/1/us-east-1/`,
		`2 sqs/1/us-east-1/queue/old`,
		`3 sqs/1/us-east-1/queue/old/`,
		`3 sqs/1/us-east-1/queue/p/m/`,
		`3 sqs/1/us-east-1/queue/p/s/`,
		`3 sqs/1/us-east-1/queue/p/a/`,
		`2 sqs/1/us-east-1/queue/q/m/0000000000000001`,
		`2 sqs/1/us-east-1/queue/q/s/0000000000000001`,
		"2 sqs/1/us-east-1/queue/f.fifo/d/g\x00d/1",
		`2 sqs/1/us-east-1/deleted/q`,
		`1 sqs/1/us-east-1/queue/q "\x01{\"Name\":\"q\",\"Fifo\":false,\"UID\":9,\"Attributes\":{\"DelaySeconds\":\"0\"},\"Tags\":{\"k\":\"v\"},\"Created\":\"2026-03-01T12:00:00Z\",\"Modified\":\"2026-03-01T12:00:00Z\",\"SeqCeiling\":65536}"`,
		`1 sqs/1/us-east-1/queue/f.fifo/m/0000000000000002 "\x0100000000-0000-4000-8000-0000000000010cc175b9c0f1b6a831c399e269772661\xc0\f\x03\x01\xd0\x0f\x88\x0e\x0e\x03\x01\x02\x01S\x01T\x01g\x01d\x1418000000000000004096\x03arn 11111111111111111111111111111111\x01\x01n\x06Binary\x00\x01\x01a"`,
		`1 sqs/1/us-east-1/queue/f.fifo/s/0000000000000002 "\x01\x03\x01\xd0\x0f\x88\x0e\x0e\x03\x01\x02"`,
		`1 sqs/1/us-east-1/queue/f.fifo/d/d "\x01\x01m\x1418000000000000004096\x80\x80\xb4\xbd\xb6\xf6ژ1"`,
		`1 sqs/1/us-east-1/queue/f.fifo/a/try "\x01{\"Queue\":\"f.fifo\",\"ID\":\"try\",\"At\":\"2026-03-01T12:00:00Z\",\"Seqs\":[2],\"Gens\":[2],\"AttributeNames\":[\"All\"],\"MessageAttributeNames\":null}"`,
		`1 sqs/1/us-east-1/deleted/old "\x01{\"Name\":\"old\",\"At\":\"2026-03-01T12:00:00Z\"}"`,
		`1 sqs/1/us-east-1/movetask/h "\x01{\"Handle\":\"h\",\"Task\":{\"TaskHandle\":\"\",\"Status\":\"RUNNING\",\"SourceArn\":\"s\",\"DestinationArn\":\"\",\"Rate\":1,\"RateGiven\":false,\"Moved\":0,\"ToMove\":2,\"FailureReason\":\"\",\"Started\":\"2026-03-01T12:00:00Z\"}}"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// And they decode back into what they came from.
	r := NewRecovered()
	for _, rec := range recs {
		if rec.Op == persist.OpPut {
			if err := r.Load(rec.Key, rec.Value); err != nil {
				t.Fatal(err)
			}
		}
	}
	fifo, _ := sqsRecords("sqs/1/us-east-1/", sqs.Change{Queues: []sqs.QueueState{{Name: "f.fifo", Fifo: true, UID: 5, Created: at}}})
	if err := r.Load(fifo[0].Key, fifo[0].Value); err != nil {
		t.Fatal(err)
	}
	ns := Namespace{"1", "us-east-1"}
	if got := r.SQSNamespaces(); len(got) != 1 || got[0] != ns {
		t.Fatalf("namespaces %v", got)
	}
	// What the Restorer gathered, restored at a time before the message's
	// visibility ends and dumped again.
	e := sqs.New(sqs.Options{Clock: clock.NewManual(time.Unix(0, 0)), Account: "1"})
	defer e.Close()
	if err := r.SQS(ns).Into(e); err != nil {
		t.Fatal(err)
	}
	var back sqs.State
	if err := e.Dump(func(c sqs.Change) error {
		back.Queues = append(back.Queues, c.Queues...)
		back.Messages = append(back.Messages, c.Messages...)
		back.Dedup = append(back.Dedup, c.Dedup...)
		back.Attempts = append(back.Attempts, c.Attempts...)
		back.DeletedNames = append(back.DeletedNames, c.DeletedNames...)
		back.MoveTasks = append(back.MoveTasks, c.MoveTasks...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(back.Messages) != 1 || len(back.Dedup) != 1 || len(back.Attempts) != 1 || len(back.DeletedNames) != 1 || len(back.MoveTasks) != 1 {
		t.Fatalf("decoded %+v", back)
	}
	m := back.Messages[0]
	if m.Body != "a" || m.Attributes[0].BinaryValue[0] != 1 || m.Status != status || m.DeadLetterSourceArn != "arn" ||
		!back.Dedup[0].At.Equal(at) || len(back.Queues) != 2 || back.Queues[1].Tags["k"] != "v" || back.Queues[1].SeqCeiling < 65536 ||
		back.MoveTasks[0].Task.ToMove != 2 || back.Attempts[0].Seqs[0] != 2 {
		t.Errorf("decoded %+v", back)
	}
}
