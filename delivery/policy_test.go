package delivery

import (
	"strings"
	"testing"
)

func TestQueuePolicyEvaluation(t *testing.T) {
	t.Parallel()
	stmt := func(s string) string { return `{"Version":"2012-10-17","Statement":[` + s + `]}` }
	for _, tc := range []struct {
		what   string
		policy string
		allow  bool
	}{
		{"empty", "", false},
		{"not JSON", "{", false},
		{"service principal, SourceArn", stmt(`{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"` + queueArn + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + topicArn + `"}}}`), true},
		{"StringEquals SourceArn", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Condition":{"StringEquals":{"aws:SourceArn":"` + topicArn + `"}}}`), true},
		{"StringLike SourceArn list", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Condition":{"StringLike":{"aws:SourceArn":["arn:other","arn:aws:sns:*:000000000000:?"]}}}`), true},
		{"key case", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Condition":{"ArnEquals":{"AWS:SourceArn":"` + topicArn + `"}}}`), true},
		{"wrong topic", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Condition":{"ArnEquals":{"aws:SourceArn":"` + topicArn + `2"}}}`), false},
		{"wrong account", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Condition":{"StringEquals":{"aws:SourceAccount":"111111111111"}}}`), false},
		{"action wildcard", stmt(`{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["sqs:Send*"]}`), true},
		{"star action", stmt(`{"Effect":"Allow","Principal":"*","Action":"*"}`), true},
		{"other action", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:ReceiveMessage"}`), false},
		{"other resource", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"arn:aws:sqs:us-east-1:000000000000:other"}`), false},
		{"resource wildcard", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"arn:aws:sqs:*:000000000000:*"}`), true},
		{"other service", stmt(`{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage"}`), false},
		{"deny wins", stmt(`{"Effect":"Allow","Principal":"*","Action":"*"},{"Effect":"Deny","Principal":"*","Action":"sqs:SendMessage"}`), false},
		{"deny for another topic", stmt(`{"Effect":"Allow","Principal":"*","Action":"*"},{"Effect":"Deny","Principal":"*","Action":"sqs:SendMessage","Condition":{"ArnEquals":{"aws:SourceArn":"arn:x"}}}`), true},
		{"NotAction ignored", stmt(`{"Effect":"Allow","Principal":"*","NotAction":"sqs:DeleteQueue"}`), false},
		{"single statement object", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage"}}`, true},
		{"unknown operator", stmt(`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Condition":{"DateGreaterThan":{"aws:CurrentTime":"2020-01-01T00:00:00Z"}}}`), false},
	} {
		var c policyCache
		ok, why := c.allows(tc.policy, queueArn, topicArn)
		if ok != tc.allow {
			t.Errorf("%s: allows = %v (%s)", tc.what, ok, why)
		}
		if !ok && why == "" {
			t.Errorf("%s: refused without a reason", tc.what)
		}
	}
}

func TestWildcard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, v string
		match      bool
	}{
		{"a*", "abc", true}, {"a?c", "abc", true}, {"a?c", "abbc", false},
		{"arn:*:q", "arn:aws/x:q", true}, {"[a]", "[a]", true}, {`a\b`, `a\b`, true}, {"*", "", true},
	} {
		if got := wildcard(tc.pattern, tc.v); got != tc.match {
			t.Errorf("wildcard(%q, %q) = %v", tc.pattern, tc.v, got)
		}
	}
}

func TestPolicyCacheIsBounded(t *testing.T) {
	t.Parallel()
	var c policyCache
	for i := 0; i < 3*policyCacheSize; i++ {
		c.allows(`{"Statement":[],"Id":"`+strings.Repeat("x", i)+`"}`, queueArn, topicArn)
	}
	if len(c.docs) > policyCacheSize {
		t.Fatalf("cache holds %d policies", len(c.docs))
	}
}
