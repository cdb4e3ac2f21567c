package main

import (
	"strings"
	"testing"

	"github.com/fanout/fanout/filter"
)

// filterMessage is filterAttrs as the filter package sees them.
func filterMessage() filter.Message {
	m := filter.Message{Attributes: map[string]filter.Attribute{}}
	for _, a := range filterAttrs {
		m.Attributes[a.name] = filter.Attribute{DataType: a.dataType, StringValue: a.value}
	}
	return m
}

func TestFilterPoliciesMatchExactlyThree(t *testing.T) {
	msg := filterMessage()
	for _, n := range []int{3, 4, 10, 200, 1000} {
		matched := 0
		seen := map[string]bool{}
		for i := range n {
			text := filterPolicy(i, n)
			if seen[text] {
				t.Fatalf("n=%d: policy %d repeats another: %s", n, i, text)
			}
			seen[text] = true
			p, err := filter.Compile(text, filter.ScopeAttributes)
			if err != nil {
				t.Fatalf("n=%d: policy %d %s: %v", n, i, text, err)
			}
			if got := p.Match(msg); got != filterMatches(i, n) {
				t.Fatalf("n=%d: policy %d %s: Match %v, filterMatches %v", n, i, text, got, !got)
			}
			if p.Match(msg) {
				matched++
			}
		}
		if matched != filteredMatches {
			t.Errorf("n=%d: %d policies match, want %d", n, matched, filteredMatches)
		}
	}
}

// TestFilterPoliciesFailOnTheLastKey checks that a policy that does not
// match passes its first four keys, so evaluating it costs all five checks,
// and that the failing operator rotates.
func TestFilterPoliciesFailOnTheLastKey(t *testing.T) {
	msg := filterMessage()
	const n = 200
	lastKeys := map[string]bool{}
	for i := range n {
		keys := filterPolicyKeys(i, n)
		if len(keys) != 5 {
			t.Fatalf("policy %d has %d keys", i, len(keys))
		}
		if filterMatches(i, n) {
			continue
		}
		head := filter.MustCompile("{"+strings.Join(keys[:4], ",")+"}", filter.ScopeAttributes)
		if !head.Match(msg) {
			t.Fatalf("policy %d fails before its last key: %v", i, keys)
		}
		name, _, _ := strings.Cut(keys[4], ":")
		lastKeys[name] = true
	}
	if len(lastKeys) != 5 {
		t.Errorf("failing keys %v, want all five attributes", lastKeys)
	}
}

func TestPubAttrsForm(t *testing.T) {
	p := newPubAttrs([]msgAttr{{"a b", "String", "x&y"}, {"n", "Number", "1.5"}})
	want := "&MessageAttributes.entry.1.Name=a+b&MessageAttributes.entry.1.Value.DataType=String" +
		"&MessageAttributes.entry.1.Value.StringValue=x%26y" +
		"&MessageAttributes.entry.2.Name=n&MessageAttributes.entry.2.Value.DataType=Number" +
		"&MessageAttributes.entry.2.Value.StringValue=1.5"
	if p.form != want {
		t.Errorf("form\n got %s\nwant %s", p.form, want)
	}
	if len(p.sdk) != 2 || *p.sdk["n"].StringValue != "1.5" || *p.sdk["a b"].DataType != "String" {
		t.Errorf("sdk %v", p.sdk)
	}
}
