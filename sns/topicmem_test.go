package sns

import (
	"testing"
	"unsafe"
)

// A topic and its subscription are few objects for the collector: the
// topic's name is the end of its ARN, its tags map comes with the first
// tag, and a subscription's protocol is one shared string.
func TestTopicKeepsFewObjects(t *testing.T) {
	t.Parallel()
	e, _, _ := newEngine(t)
	form := "Name=orders&Protocol=sqs" // as a request's form: the strings below are slices of it
	topic, err := e.CreateTopic(form[5:11], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if topic.tags != nil || topic.name != "orders" || unsafe.StringData(topic.name) != unsafe.StringData(topic.arn[len(topic.arn)-6:]) {
		t.Fatalf("topic: tags %v, name %q of arn %q", topic.tags, topic.name, topic.arn)
	}
	if err := e.TagResource(topic.Arn(), []Tag{{"team", "a"}}); err != nil {
		t.Fatal(err)
	}
	if tags, err := e.ListTags(topic.Arn()); err != nil || len(tags) != 1 || tags[0] != (Tag{"team", "a"}) {
		t.Fatalf("tags %v, %v", tags, err)
	}
	if got := protocolName(form[21:]); got != "sqs" || unsafe.StringData(got) == unsafe.StringData(form[21:]) {
		t.Errorf("protocol %q shares the form's bytes", got)
	}
	if got := protocolName("gopher"); got != "gopher" {
		t.Errorf("an unknown protocol: %q", got)
	}
}
