package playground

import (
	"strconv"
	"testing"

	"github.com/fanout/fanout/filter"
)

func TestEvaluate(t *testing.T) {
	t.Parallel()
	store := func(v string) filter.Message {
		return filter.Message{Attributes: map[string]filter.Attribute{"store": {DataType: "String", StringValue: v}}}
	}
	for _, tc := range []struct {
		name    string
		policy  string
		scope   filter.Scope
		msg     filter.Message
		valid   bool
		matched bool
		err     string
		offset  int // -1: no offset expected
	}{
		{name: "match", policy: `{"store":["eu-west"]}`, msg: store("eu-west"), valid: true, matched: true, offset: -1},
		{name: "no match", policy: `{"store":["eu-west"]}`, msg: store("us-east"), valid: true, offset: -1},
		{name: "empty policy", policy: ``, msg: store("x"), valid: true, matched: true, offset: -1},
		{
			name: "body scope", policy: `{"a":{"b":[{"numeric":[">",1]}]}}`, scope: filter.ScopeBody,
			msg: filter.Message{Body: `{"a":{"b":2}}`}, valid: true, matched: true, offset: -1,
		},
		{
			name: "invalid condition", policy: `{"store":[]}`, msg: store("x"),
			err: "Invalid parameter: FilterPolicy: Empty arrays are not allowed", offset: 11,
		},
		{
			name: "nested in attribute scope", policy: `{"a":{"b":["c"]}}`, msg: store("x"),
			err: "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy", offset: 5,
		},
		{
			name: "bad scope", policy: `{}`, scope: "Body", msg: store("x"),
			err: "Invalid parameter: FilterPolicyScope: Invalid value [Body]. Please use either MessageBody or MessageAttributes", offset: -1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(tc.policy, tc.scope, tc.msg)
			if r.Valid != tc.valid || r.Matched != tc.matched || r.Error != tc.err {
				t.Fatalf("got valid=%v matched=%v error=%q, want %v %v %q", r.Valid, r.Matched, r.Error, tc.valid, tc.matched, tc.err)
			}
			switch {
			case tc.offset < 0 && r.ErrorOffset != nil:
				t.Errorf("offset %d, want none", *r.ErrorOffset)
			case tc.offset >= 0 && (r.ErrorOffset == nil || *r.ErrorOffset != tc.offset):
				t.Errorf("offset %s, want %d", showOffset(r.ErrorOffset), tc.offset)
			}
			if (r.Explanation != nil) != tc.valid {
				t.Errorf("explanation %v for valid=%v", r.Explanation, tc.valid)
			}
			if r.Explanation != nil && r.Explanation.Matched != r.Matched {
				t.Errorf("explanation says %v, result %v", r.Explanation.Matched, r.Matched)
			}
		})
	}
}

func showOffset(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}
