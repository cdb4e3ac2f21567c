package durable

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/retrypolicy"
)

// The delivery and clock records are a format too: this pins their bytes.
func TestDeliveryRecordsAreFormat1(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	topic := "arn:aws:sns:eu-west-1:111111111111:t"
	pol := retrypolicy.Default("https")
	shared := &delivery.Message{ID: "n", TopicArn: topic, Subject: "s", Timestamp: at, Body: "once"}
	c := delivery.Change{
		Reset:     true,
		Ended:     []delivery.JobState{{ID: 1, TopicArn: topic}},
		Forgotten: []delivery.MessageState{{Ref: 8, Message: &delivery.Message{ID: "gone", TopicArn: topic}}},
		Messages:  []delivery.MessageState{{Ref: 9, Message: shared}},
		Jobs: []delivery.JobState{
			// As jobs were written before messages had keys of their own:
			// the message inside.
			{ID: 2, TopicArn: topic, Message: &delivery.Message{ID: "m", TopicArn: topic, Timestamp: at, Body: "b",
				Attributes: []delivery.Attribute{{Name: "a", DataType: "Binary", BinaryValue: []byte{1}}}},
				SubscriptionArn: topic + ":s", Protocol: "https", Endpoint: "https://x", Raw: true, DeadLetterArn: "arn:aws:sqs:eu-west-1:111111111111:dlq",
				Policy: pol, Created: at, Attempts: 2, Due: at.Add(40 * time.Second)},
			{ID: 3, TopicArn: topic, Message: shared, MessageRef: 9, SubscriptionArn: topic + ":r", Protocol: "http", Endpoint: "http://z",
				Policy: pol, Created: at, Attempts: 1, Due: at.Add(20 * time.Second)},
			{ID: 0x1f, TopicArn: topic, Control: &delivery.Control{Type: delivery.TypeSubscriptionConfirmation, ID: "c", TopicArn: topic,
				SubscriptionArn: topic + ":p", Token: "ab", Timestamp: at, SignatureVersion: "1"},
				SubscriptionArn: topic + ":p", Protocol: "http", Endpoint: "http://y", Policy: pol, Created: at, Due: at},
		},
	}
	recs, err := deliveryRecords(c)
	if err != nil {
		t.Fatal(err)
	}
	clk, err := ClockOffset(90 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, clk...)
	var got []string
	for _, r := range recs {
		line := string(rune('0'+r.Op)) + " " + string(r.Key)
		if r.Value != nil {
			line += " " + string(rune('0'+r.Value[0])) + string(r.Value[1:])
		}
		got = append(got, line)
	}
	want := []string{
		`3 delivery/`,
		`2 delivery/111111111111/eu-west-1/job/0000000000000001`,
		`2 delivery/111111111111/eu-west-1/msg/0000000000000008`,
		`1 delivery/111111111111/eu-west-1/msg/0000000000000009 1{"Ref":9,"Message":{"ID":"n","TopicArn":"arn:aws:sns:eu-west-1:111111111111:t","Subject":"s","Timestamp":"2026-03-01T12:00:00Z","Body":"once","PerProtocol":null,"Attributes":null,"Fifo":false,"GroupID":"","DedupID":"","SequenceNumber":"","SignatureVersion":"","Replayed":false,"DisplayName":""}}`,
		`1 delivery/111111111111/eu-west-1/job/0000000000000002 1{"ID":2,"TopicArn":"arn:aws:sns:eu-west-1:111111111111:t","Message":{"ID":"m","TopicArn":"arn:aws:sns:eu-west-1:111111111111:t","Subject":"","Timestamp":"2026-03-01T12:00:00Z","Body":"b","PerProtocol":null,"Attributes":[{"Name":"a","DataType":"Binary","StringValue":"","BinaryValue":"AQ=="}],"Fifo":false,"GroupID":"","DedupID":"","SequenceNumber":"","SignatureVersion":"","Replayed":false,"DisplayName":""},"SubscriptionArn":"arn:aws:sns:eu-west-1:111111111111:t:s","Protocol":"https","Endpoint":"https://x","Raw":true,"DeadLetterArn":"arn:aws:sqs:eu-west-1:111111111111:dlq","Policy":{"Retry":{"MinDelayTarget":20,"MaxDelayTarget":20,"NumRetries":3,"NumMaxDelayRetries":0,"NumNoDelayRetries":0,"NumMinDelayRetries":0,"BackoffFunction":"linear"},"Sickly":null,"Throttle":null,"Request":{"HeaderContentType":"text/plain; charset=UTF-8"},"Guaranteed":false},"Created":"2026-03-01T12:00:00Z","Attempts":2,"Due":"2026-03-01T12:00:40Z"}`,
		`1 delivery/111111111111/eu-west-1/job/0000000000000003 1{"ID":3,"TopicArn":"arn:aws:sns:eu-west-1:111111111111:t","MessageRef":9,"SubscriptionArn":"arn:aws:sns:eu-west-1:111111111111:t:r","Protocol":"http","Endpoint":"http://z","Raw":false,"DeadLetterArn":"","Policy":{"Retry":{"MinDelayTarget":20,"MaxDelayTarget":20,"NumRetries":3,"NumMaxDelayRetries":0,"NumNoDelayRetries":0,"NumMinDelayRetries":0,"BackoffFunction":"linear"},"Sickly":null,"Throttle":null,"Request":{"HeaderContentType":"text/plain; charset=UTF-8"},"Guaranteed":false},"Created":"2026-03-01T12:00:00Z","Attempts":1,"Due":"2026-03-01T12:00:20Z"}`,
		`1 delivery/111111111111/eu-west-1/job/000000000000001f 1{"ID":31,"TopicArn":"arn:aws:sns:eu-west-1:111111111111:t","Control":{"Type":"SubscriptionConfirmation","ID":"c","TopicArn":"arn:aws:sns:eu-west-1:111111111111:t","SubscriptionArn":"arn:aws:sns:eu-west-1:111111111111:t:p","Token":"ab","Timestamp":"2026-03-01T12:00:00Z","SignatureVersion":"1","DisplayName":""},"SubscriptionArn":"arn:aws:sns:eu-west-1:111111111111:t:p","Protocol":"http","Endpoint":"http://y","Raw":false,"DeadLetterArn":"","Policy":{"Retry":{"MinDelayTarget":20,"MaxDelayTarget":20,"NumRetries":3,"NumMaxDelayRetries":0,"NumNoDelayRetries":0,"NumMinDelayRetries":0,"BackoffFunction":"linear"},"Sickly":null,"Throttle":null,"Request":{"HeaderContentType":"text/plain; charset=UTF-8"},"Guaranteed":false},"Created":"2026-03-01T12:00:00Z","Attempts":0,"Due":"2026-03-01T12:00:00Z"}`,
		`1 clock/offset 1{"Offset":5400000000000}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// And they decode back into the state they came from, whichever of a
	// job and its message comes first.
	r := NewRecovered()
	for i := len(recs) - 1; i >= 3; i-- {
		if err := r.Load(recs[i].Key, recs[i].Value); err != nil {
			t.Fatal(err)
		}
	}
	if r.ClockOffset() != 90*time.Minute {
		t.Errorf("clock offset %v", r.ClockOffset())
	}
	jobs, err := r.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].ID < jobs[j].ID })
	if len(jobs) != 3 || !reflect.DeepEqual(jobs[0].Policy, pol) || jobs[0].Attempts != 2 || !jobs[0].Due.Equal(at.Add(40*time.Second)) ||
		jobs[0].Message.Attributes[0].BinaryValue[0] != 1 || jobs[0].MessageRef != 0 ||
		jobs[1].MessageRef != 9 || jobs[1].Message == nil || jobs[1].Message.Body != "once" || jobs[1].Message.Subject != "s" || jobs[1].Endpoint != "http://z" ||
		jobs[2].Control.Token != "ab" || jobs[2].ID != 0x1f {
		t.Errorf("decoded %+v", jobs)
	}
	if len(r.SNSNamespaces()) != 0 {
		t.Errorf("delivery keys made SNS namespaces: %v", r.SNSNamespaces())
	}
}

func TestUnknownDeliveryKeysAreRefused(t *testing.T) {
	for _, kv := range [][2]string{
		{"delivery/1/r/job/0000000000000001", "\x01{\"ID\":2}"}, // id differs from the key's
		{"delivery/1/r/job/1", "\x01{\"ID\":1}"},
		{"delivery/1/r/other/0000000000000001", "\x01{}"},
		{"delivery/1/r/job/000000000000000g", "\x01{}"},
		{"clock/offset", "\x02{}"},
		{"delivery/1/r/msg/0000000000000001", "\x01{\"Ref\":2,\"Message\":{}}"}, // ref differs from the key's
		{"delivery/1/r/msg/0000000000000001", "\x01{\"Ref\":1}"},                // no message
	} {
		if err := NewRecovered().Load([]byte(kv[0]), []byte(kv[1])); err == nil {
			t.Errorf("Load(%q, %q) accepted it", kv[0], kv[1])
		}
	}
}

// A job whose message is not stored is refused, not restored without it:
// the dispatcher never writes one, so the data dir is damaged.
func TestAJobWithoutItsMessageIsRefused(t *testing.T) {
	r := NewRecovered()
	if err := r.Load([]byte("delivery/1/us-east-1/job/0000000000000004"),
		[]byte("\x01{\"ID\":4,\"TopicArn\":\"arn:aws:sns:us-east-1:1:t\",\"MessageRef\":7}")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Deliveries(); err == nil || !strings.Contains(err.Error(), "message 0000000000000007") {
		t.Fatalf("Deliveries: %v", err)
	}
}
