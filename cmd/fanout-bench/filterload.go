package main

import (
	"strconv"
	"strings"
)

// The publish-filtered scenario: a topic with N SQS subscriptions, each with
// its own 5-key MessageAttributes filter policy, and messages carrying the
// 5 attributes those policies look at. Only filteredMatches subscriptions
// accept the messages, so a publish costs N policy evaluations and
// filteredMatches deliveries; the baseline is a topic with filteredMatches
// unfiltered subscriptions, publishing the same messages.

// filteredMatches is how many of the filtered subscriptions match.
const filteredMatches = 3

// filterAttrs are the attributes of every message publish-filtered sends.
var filterAttrs = []msgAttr{
	{"tenant", "String", "acme"},
	{"region", "String", "eu-west-1"},
	{"amount", "Number", "150"},
	{"event", "String", "order-created"},
	{"trace", "String", "t-0123456789"},
}

// filterKeys builds one condition per attribute of filterAttrs, in that
// order: exact, prefix, numeric range, anything-but and exists. pass says
// whether the condition accepts the published value; i makes each policy's
// text its own, as real subscribers' policies are.
var filterKeys = []func(i int, pass bool) string{
	func(i int, pass bool) string { // exact
		if pass {
			return `"tenant":["acme","tenant-` + strconv.Itoa(i) + `"]`
		}
		return `"tenant":["tenant-` + strconv.Itoa(i) + `","other-` + strconv.Itoa(i) + `"]`
	},
	func(i int, pass bool) string { // prefix
		if pass {
			return `"region":[{"prefix":"eu-"}]`
		}
		return `"region":[{"prefix":"us-` + strconv.Itoa(i) + `"}]`
	},
	func(i int, pass bool) string { // numeric range
		if pass {
			return `"amount":[{"numeric":[">=",100,"<",` + strconv.Itoa(1000+i) + `]}]`
		}
		return `"amount":[{"numeric":[">=",` + strconv.Itoa(1000+i) + `,"<",` + strconv.Itoa(5000+i) + `]}]`
	},
	func(i int, pass bool) string { // anything-but
		if pass {
			return `"event":[{"anything-but":["order-deleted","order-` + strconv.Itoa(i) + `"]}]`
		}
		return `"event":[{"anything-but":["order-created","order-` + strconv.Itoa(i) + `"]}]`
	},
	func(i int, pass bool) string { // exists
		if pass {
			return `"trace":[{"exists":true}]`
		}
		return `"trace":[{"exists":false}]`
	},
}

// filterMatches reports whether subscription i of n is one of the
// filteredMatches that accept the messages; they are spread over the
// subscription list rather than bunched at its start.
func filterMatches(i, n int) bool {
	if n <= filteredMatches {
		return true
	}
	step := n / filteredMatches
	return i%step == 0 && i/step < filteredMatches
}

// filterPolicy returns the FilterPolicy of subscription i of n. A policy
// that does not match fails on exactly one key, and that key comes last in
// the document, so every policy costs all five key checks however the
// server orders them (fanout checks keys in document order and stops at the
// first that fails). Which operator fails, and so the key order, rotates
// with i.
func filterPolicy(i, n int) string {
	return "{" + strings.Join(filterPolicyKeys(i, n), ",") + "}"
}

// filterPolicyKeys returns the members of filterPolicy(i, n), in order.
func filterPolicyKeys(i, n int) []string {
	match := filterMatches(i, n)
	fail := i % len(filterKeys)
	parts := make([]string, 0, len(filterKeys))
	for k := 1; k <= len(filterKeys); k++ {
		key := (fail + k) % len(filterKeys) // ends with fail
		parts = append(parts, filterKeys[key](i, match || key != fail))
	}
	return parts
}
