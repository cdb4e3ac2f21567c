package playground

import (
	"strings"
	"testing"

	"github.com/fanout/fanout/filter"
)

// TestExamplesGiveTheirExpectedOutcome holds the page's examples, and so
// the engine, to what AWS answers for them.
func TestExamplesGiveTheirExpectedOutcome(t *testing.T) {
	t.Parallel()
	for _, ex := range Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			attrs, err := ParseAttributes([]byte(ex.Attributes))
			if err != nil {
				t.Fatal(err)
			}
			r := Evaluate(ex.Policy, ex.Scope, filter.Message{Body: ex.Message, Attributes: attrs})
			got := ExpectNoMatch
			switch {
			case !r.Valid:
				got = ExpectInvalid
			case r.Matched:
				got = ExpectMatch
			}
			if got != ex.Expect {
				t.Fatalf("got %s (%s), want %s", got, r.Error, ex.Expect)
			}
			if ex.Source == "" || ex.Message == "" {
				t.Errorf("source %q, message %q: both are shown and must be set", ex.Source, ex.Message)
			}
		})
	}
}

// TestExamplesCoverTheOperators checks the list keeps one example of each
// feature the page promises.
func TestExamplesCoverTheOperators(t *testing.T) {
	t.Parallel()
	has := func(pred func(Example) bool) bool {
		for _, ex := range Examples() {
			if pred(ex) {
				return true
			}
		}
		return false
	}
	for _, op := range []string{`"prefix"`, `"suffix"`, `"equals-ignore-case"`, `"numeric"`, `"anything-but"`, `"exists"`, `"cidr"`, `"$or"`} {
		if !has(func(ex Example) bool { return strings.Contains(ex.Policy, op) && ex.Expect != ExpectInvalid }) {
			t.Errorf("no valid example uses %s", op)
		}
	}
	if !has(func(ex Example) bool {
		return strings.Contains(ex.Policy, `["rugby", "tennis"]`) && ex.Expect == ExpectMatch
	}) {
		t.Error("no example of exact values")
	}
	if !has(func(ex Example) bool { return ex.Scope == filter.ScopeBody && strings.Count(ex.Policy, "{") > 2 }) {
		t.Error("no example of a nested body policy")
	}
	for _, want := range []string{ExpectMatch, ExpectNoMatch, ExpectInvalid} {
		if !has(func(ex Example) bool { return ex.Expect == want }) {
			t.Errorf("no example expecting %s", want)
		}
	}
}
