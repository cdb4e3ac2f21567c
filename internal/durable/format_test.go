package durable

import (
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/sns"
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
		{"sqs/1/r/queue/q", "\x01{}"},
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
