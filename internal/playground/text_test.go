package playground

import (
	"strings"
	"testing"

	"github.com/fanout/fanout/filter"
)

func TestWriteText(t *testing.T) {
	t.Parallel()
	attrs := func(kv ...string) filter.Message {
		m := filter.Message{Attributes: map[string]filter.Attribute{}}
		for i := 0; i < len(kv); i += 3 {
			m.Attributes[kv[i]] = filter.Attribute{DataType: kv[i+1], StringValue: kv[i+2]}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		policy string
		scope  filter.Scope
		msg    filter.Message
		want   string
	}{
		{
			name:   "match",
			policy: `{"store":["eu-west"],"price":[{"numeric":[">=",100]}]}`,
			msg:    attrs("store", "String", "eu-west", "price", "Number", "120.5"),
			want: `match (MessageAttributes scope)
  ✓ store: "eu-west" matches "eu-west"
  ✓ price: 120.5 matches {"numeric":[">=",100]}
`,
		},
		{
			name:   "no match",
			policy: `{"store":["eu-west",{"prefix":"eu-"}],"gone":[{"exists":false}]}`,
			msg:    attrs("store", "String", "us-east"),
			want: `no match (MessageAttributes scope)
  ✗ store: no condition accepts the value
      message:    "us-east"
      conditions: "eu-west", {"prefix":"eu-"}
  ✓ gone: absent matches {"exists":false}
`,
		},
		{
			name:   "alternatives",
			policy: `{"$or":[{"a":["x"]},{"b":[{"exists":true}]}]}`,
			msg:    attrs("b", "String", "y"),
			want: `match (MessageAttributes scope)
  alternative 1 of 2 ($or): no match
    ✗ a: the message has no attribute "a"; only {"exists":false} matches a missing attribute
        conditions: "x"
  alternative 2 of 2 ($or): match
    ✓ b: "y" matches {"exists":true}
`,
		},
		{
			name:   "anything-but on every element",
			policy: `{"tags":[{"anything-but":["x"]}]}`,
			msg:    attrs("tags", "String.Array", `["a","b"]`),
			want: `match (MessageAttributes scope)
  ✓ tags: every element matches {"anything-but":["x"]}
`,
		},
		{
			name:   "body not an object",
			policy: `{"a":["b"]}`, scope: filter.ScopeBody, msg: filter.Message{Body: `"a"`},
			want: `no match (MessageBody scope)
  the message body is JSON but not a JSON object, so no MessageBody policy matches it
`,
		},
		{
			name:   "invalid, with the spot",
			policy: "{\n\t\"a\": [{\"numeric\": [\"<\", \"x\"]}]\n}",
			want: "invalid policy: Invalid parameter: FilterPolicy: Value of < must be numeric\n" +
				"  at line 2, column 26:\n" +
				"    \t\"a\": [{\"numeric\": [\"<\", \"x\"]}]\n" +
				"    \t                        ^\n",
		},
		{
			name:   "invalid, whole policy",
			policy: `{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}`,
			want:   "invalid policy: Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteText(&b, Evaluate(tc.policy, tc.scope, tc.msg), tc.policy); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestPointAtClipsLongLines(t *testing.T) {
	t.Parallel()
	src := strings.Repeat("a", 100) + "X" + strings.Repeat("b", 100)
	got := pointAt(src, 100)
	want := "  at line 1, column 101:\n    …" + strings.Repeat("a", 60) + "X" + strings.Repeat("b", 59) + "…\n     " + strings.Repeat(" ", 60) + "^\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if got := pointAt("ab", 2); got != "  at line 1, column 3:\n    ab\n      ^\n" {
		t.Errorf("at the end: %q", got)
	}
}
