package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/internal/jsondepth"
)

var onePassSeeds = []string{
	`{}`, ` { } `, `{"QueueUrl":"http://localhost:4566/000000000000/q","MessageBody":"hello"}`,
	`{"QueueUrl":"u","Entries":[{"Id":"1","MessageBody":"a"},{"Id":"2","MessageBody":"b\"c\\d\u00e9","DelaySeconds":5}]}`,
	`{"QueueUrl":"u","Entries":[]}`, `{"Entries":null}`, `{"Entries":[null]}`, `{"Entries":[1]}`, `{"Entries":{}}`,
	`{"QueueUrl":"u","MessageBody":"x","MessageAttributes":{"a":{"DataType":"String","StringValue":"v"},"b":{"DataType":"Binary","BinaryValue":"AQI="}}}`,
	`{"QueueUrl":"u","AttributeNames":["All"],"MaxNumberOfMessages":10,"WaitTimeSeconds":0,"VisibilityTimeout":30}`,
	`{"QueueUrl":"u","MaxNumberOfMessages":1.5}`, `{"QueueUrl":"u","MaxNumberOfMessages":"10"}`, `{"QueueUrl":1}`,
	`{"QueueUrl":"a","QueueUrl":"b"}`, `{"Unknown":{"deep":[1,2,{"x":null}]},"QueueUrl":"u"}`, `{"Queue\u0055rl":"u"}`,
	`{"QueueUrl":"u",}`, `{"QueueUrl":"u"`, `{"QueueUrl":"u"} x`, `[]`, `null`, `"s"`, `{"QueueUrl":null}`,
	`{"Entries":[{"Id":"1","Entries":[{"Id":"x"}]}]}`, `{"Tags":{"k":"v"},"tags":{"a":null}}`, `{"MessageBody":"\u0000"}`,
	`{"DelaySeconds":-0.0e0}`, `{"DelaySeconds":1e3}`, `{"DelaySeconds":true}`, `{"MessageBody":"abcdefghijklmnop\u00e9qrstuvwxyz"}`,
	"{\"MessageBody\":\"tab\there\"}", "{\n\t\"QueueUrl\" : \"u\" ,\r\n \"Entries\" : [ { \"Id\" : \"1\" } ] }",
	`{"Entries":[{"Id":"0"},{"Id":"1"},{"Id":"2"},{"Id":"3"},{"Id":"4"},{"Id":"5"},{"Id":"6"},{"Id":"7"},{"Id":"8"},{"Id":"9"}]}`,
	`{"Entries":[{"Id":"0"},{"Id":"1"},{"Id":"2"},{"Id":"3"},{"Id":"4"},{"Id":"5"},{"Id":"6"},{"Id":"7"},{"Id":"8"},{"Id":"9"},{"Id":"10"}]}`,
	`{"x":` + strings.Repeat("[", jsondepth.Max-1) + strings.Repeat("]", jsondepth.Max-1) + `}`,
	`{"x":` + strings.Repeat("[", jsondepth.Max) + strings.Repeat("]", jsondepth.Max) + `}`,
	`{"Entries":[{"x":` + strings.Repeat("[", jsondepth.Max-3) + strings.Repeat("]", jsondepth.Max-3) + `}]}`,
	`{"Entries":[{"x":` + strings.Repeat("[", jsondepth.Max-2) + strings.Repeat("]", jsondepth.Max-2) + `}]}`,
}

// describe is what a decoded request holds, for comparing the two paths.
func describe(in *jsonInput) string {
	var b strings.Builder
	members := func(ms []member) {
		for _, m := range ms {
			fmt.Fprintf(&b, "%q=%d|%q|%q|%v;", m.key, m.val.Type, m.val.Raw, m.val.Str, m.val.Num)
		}
	}
	members(in.members)
	if d := in.d; d != nil {
		fmt.Fprintf(&b, " entries %q more=%v:", d.entriesRaw.Raw, d.moreEntries)
		for _, e := range d.entries {
			b.WriteString(" [")
			members(e.members)
			b.WriteString("]")
		}
	}
	return b.String()
}

// checkOnePass: where the one-pass decoder takes a body, the body is valid
// and the two-pass decoder takes it too, with the same members and entries.
func checkOnePass(t *testing.T, body string) {
	t.Helper()
	one := &jsonDecoder{}
	in, ok := one.decodeOnePass(body)
	if !ok {
		if len(one.members)+len(one.arena)+len(one.entries) != 0 || one.entriesRaw.Exists() {
			t.Fatalf("%q: a decoder given up on is not empty", body)
		}
		return
	}
	if !jsondepth.Valid(body, jsondepth.Max) {
		t.Fatalf("%q: taken in one pass, but not valid", body)
	}
	two := &jsonDecoder{}
	want, err := two.decode(gjson.Parse(body))
	if err != nil {
		t.Fatalf("%q: taken in one pass, but the two-pass decoder says %v", body, err)
	}
	if got, w := describe(in), describe(want); got != w {
		t.Fatalf("%q:\none pass %s\ntwo      %s", body, got, w)
	}
}

func TestOnePassDecodesAsTwoPasses(t *testing.T) {
	t.Parallel()
	taken := 0
	for _, s := range onePassSeeds {
		checkOnePass(t, s)
		if _, ok := (&jsonDecoder{}).decodeOnePass(s); ok {
			taken++
		}
	}
	if taken < 20 {
		t.Fatalf("only %d seeds taken in one pass", taken)
	}
}

func FuzzOnePass(f *testing.F) {
	for _, s := range onePassSeeds {
		f.Add(s)
	}
	f.Fuzz(checkOnePass)
}
