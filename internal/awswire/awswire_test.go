package awswire

import (
	"encoding/xml"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"

	"github.com/fanout/fanout/awserr"
)

func TestFormListsMapsAndEntries(t *testing.T) {
	t.Parallel()
	v := url.Values{
		"AttributeName.2":                           {"B"},
		"AttributeName.1":                           {"A"},
		"AttributeName.10":                          {"C"},
		"Attribute.1.Name":                          {"VisibilityTimeout"},
		"Attribute.1.Value":                         {"60"},
		"Entry.1.Id":                                {"a"},
		"Entry.2.Id":                                {"b"},
		"Entry.2.MessageAttribute.1.Name":           {"n"},
		"Entry.2.MessageAttribute.1.Value.DataType": {"String"},
	}
	f := NewForm(v)
	if got := f.List("AttributeName"); !reflect.DeepEqual(got, []string{"A", "B", "C"}) {
		t.Fatalf("List = %v", got)
	}
	if got := f.Map("Attribute", "Name", "Value"); !reflect.DeepEqual(got, map[string]string{"VisibilityTimeout": "60"}) {
		t.Fatalf("Map = %v", got)
	}
	es := f.Entries("Entry")
	if len(es) != 2 || es[0].Get("Id") != "a" || es[1].Get("Id") != "b" {
		t.Fatalf("Entries = %v", es)
	}
	if got := es[1].Entries("MessageAttribute")[0].Get("Value.DataType"); got != "String" {
		t.Fatalf("nested entry = %q", got)
	}
	if f.Has("Missing") || f.Get("Missing") != "" {
		t.Fatal("missing parameter reported present")
	}
}

func TestEscapedTextRoundTrips(t *testing.T) {
	t.Parallel()
	in := "a&b<c>d\"e'f\r\ng\tend"
	var x XMLWriter
	x.Elem("V", in)
	if got, want := string(x.Buf), "<V>a&amp;b&lt;c&gt;d&quot;e&apos;f&#xD;\ng\tend</V>"; got != want {
		t.Fatalf("escaped %q, want %q", got, want)
	}
	var out string
	if err := xml.Unmarshal(x.Buf, &out); err != nil || out != in {
		t.Fatalf("round trip %q, %v", out, err)
	}
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	k := awserr.Kind{Code: "QueueDoesNotExist", QueryCode: "AWS.SimpleQueueService.NonExistentQueue", Status: 400}
	e := k.New("The specified queue does not exist.")
	e.QueryMessage = "The specified queue does not exist for this wsdl version."

	rec := httptest.NewRecorder()
	WriteJSONError(rec, "rid", "com.amazonaws.sqs", e)
	if rec.Code != 400 || rec.Header().Get("x-amzn-query-error") != "AWS.SimpleQueueService.NonExistentQueue;Sender" {
		t.Fatalf("json error status %d header %q", rec.Code, rec.Header().Get("x-amzn-query-error"))
	}
	if got := rec.Body.String(); got != `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}` {
		t.Fatalf("json body %s", got)
	}

	rec = httptest.NewRecorder()
	WriteXMLError(rec, "rid", "http://queue.amazonaws.com/doc/2012-11-05/", e)
	want := `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error><RequestId>rid</RequestId></ErrorResponse>`
	if rec.Body.String() != want || rec.Code != 400 {
		t.Fatalf("xml error %d %s", rec.Code, rec.Body.String())
	}
}
