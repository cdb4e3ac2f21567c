package delivery

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fanout/fanout/filter"
	"github.com/fanout/fanout/retrypolicy"
)

// A Fan holds back what deliveries to queues record; the counts and
// records must still come out as Deliver one at a time leaves them: in the
// order tried, past a fan's worth of held deliveries, around failed sends,
// jobs, filtered-out messages and protocols not delivered to.
func TestFanCountsAndRecordsAsDeliverDoes(t *testing.T) {
	t.Parallel()
	p := filter.MustCompile(`{"k":["v"]}`, filter.ScopeAttributes)
	bp := filter.MustCompile(`{"k":["v"]}`, filter.ScopeBody)
	attrs := map[string]filter.Attribute{"k": {DataType: "String", StringValue: "w"}}
	// Filtered-out messages of each kind a record explains: by attributes,
	// by the kept body (both worked out when read), and by a protocol's
	// own body, which the records do not keep (worked out at once).
	kinds := []struct {
		p  *filter.Policy
		fm filter.Message
	}{{p, filter.Message{}}, {p, filter.Message{Attributes: attrs}}, {bp, filter.Message{Body: "hi"}}, {bp, filter.Message{Body: `{"k":"w"}`}}}
	policy := retrypolicy.Default("sqs")
	type step struct {
		sub      Subscriber
		filtered bool
		kind     int
	}
	var steps []step
	filtered := 0
	for i := range 4*fanHeld + 3 {
		s := Subscriber{Arn: fmt.Sprintf("sub-%02d", i), Protocol: "sqs", Endpoint: queueArn, Raw: i%2 == 0}
		switch {
		case i == 20:
			s.Protocol = "carrier-pigeon" // not delivered to
		case i == 22:
			s.Protocol = "application" // the outbox
		case i%7 == 3:
			s.Endpoint = queueArn + "-gone" // the send fails
		case i%7 == 5:
			s.Policy = &policy // a job
		case i%7 == 6:
			filtered++
			steps = append(steps, step{s, true, filtered % len(kinds)})
			continue
		}
		steps = append(steps, step{sub: s})
	}
	run := func(fan bool) (Stats, []Record) {
		d := newTestDispatcher(fakeQueues{queueArn: &fakeQueue{}}, &fakeSigner{}, false)
		m := message()
		f := d.Fan(m)
		for _, st := range steps {
			switch {
			case st.filtered && fan:
				f.Filtered(st.sub, kinds[st.kind].p, kinds[st.kind].fm)
			case st.filtered:
				d.Filtered(m, st.sub, kinds[st.kind].p, kinds[st.kind].fm)
			case fan:
				_, _ = f.Deliver(st.sub)
			default:
				_ = d.Deliver(m, st.sub)
			}
		}
		f.Close()
		return d.Stats(), d.Deliveries(m.ID)
	}
	wantStats, wantRecs := run(false)
	gotStats, gotRecs := run(true)
	if wantStats.Delivered == 0 || wantStats.Failed == 0 || wantStats.Filtered == 0 || wantStats.NotDelivered == 0 {
		t.Fatalf("the steps miss an outcome: %d delivered, %d failed, %d filtered, %d not delivered", wantStats.Delivered, wantStats.Failed, wantStats.Filtered, wantStats.NotDelivered)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{{"stats", gotStats, wantStats}, {"records", gotRecs, wantRecs}} {
		g, _ := json.Marshal(c.got)
		w, _ := json.Marshal(c.want)
		if string(g) != string(w) {
			t.Errorf("%s through a fan:\n%s\none at a time:\n%s", c.what, g, w)
		}
	}
}

// What a fan holds when the dispatcher is reset is forgotten with the rest.
func TestFanForgetsWhatAResetForgets(t *testing.T) {
	t.Parallel()
	d := newTestDispatcher(fakeQueues{queueArn: &fakeQueue{}}, &fakeSigner{}, false)
	m := message()
	f := d.Fan(m)
	if _, err := f.Deliver(Subscriber{Arn: "before", Protocol: "sqs", Endpoint: queueArn, Raw: true}); err != nil {
		t.Fatal(err)
	}
	d.Reset()
	if _, err := f.Deliver(Subscriber{Arn: "after", Protocol: "sqs", Endpoint: queueArn, Raw: true}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs := d.Deliveries(m.ID)
	if st := d.Stats(); st.Delivered != 1 || len(recs) != 1 || recs[0].SubscriptionArn != "after" {
		t.Fatalf("after a reset: %d delivered, records %+v", st.Delivered, recs)
	}
}
