// Package filter implements Amazon SNS subscription filter policies: the
// JSON language of the FilterPolicy subscription attribute, validated the
// way SNS validates it and matched against published messages.
//
// A policy is compiled once, when a subscription's FilterPolicy or
// FilterPolicyScope is set, and then matched against every message
// published to the topic:
//
//	scope, err := filter.ParseScope(attrs["FilterPolicyScope"])
//	if err != nil { ... }          // *filter.Error with AWS's message
//	p, err := filter.Compile(attrs["FilterPolicy"], scope)
//	if err != nil { ... }          // *filter.Error with AWS's message
//	if p.Match(filter.Message{Body: body, Attributes: attributes}) { deliver() }
//
// Everything SNS documents is supported: exact strings and numbers,
// true/false/null literals, prefix, suffix, equals-ignore-case,
// anything-but (a value, a list, or a prefix), numeric comparisons and
// ranges, exists, cidr (IPv4 and IPv6), and $or at any level; keys are
// ANDed and the conditions of one key ORed. In MessageAttributes scope
// String, String.Array and Number attributes are compared and Binary ones
// only exist. In MessageBody scope the body must be a JSON object; nested
// policy objects and dotted keys address nested properties, and arrays
// match through any element (keys under one array of objects must be
// satisfied by the same element).
//
// Rejected policies return an *Error whose text is AWS's, with its limits:
// five keys, 150 combinations, 256 KB. Explain reports, key by key, why a
// message did or did not match.
//
// Reference: https://docs.aws.amazon.com/sns/latest/dg/sns-message-filtering.html
// and the project's spec of AWS behaviour; NOTES.md in this directory lists
// where the implementation had to choose.
package filter
