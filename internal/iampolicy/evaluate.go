package iampolicy

import (
	"encoding/json"
	"path"
	"strings"
)

// AllowsAccount reports whether a resource policy lets a caller of another
// account perform action (e.g. "SNS:Publish") on resource: some Allow
// statement names the caller ("*", {"AWS":"*"}, its account id or
// arn:aws:iam::<account>:root), the action and the resource, and no such
// Deny does. The condition keys aws:SourceOwner, aws:SourceAccount and
// aws:PrincipalAccount read the caller's account; a statement with any
// other condition cannot be shown to hold, so it does not apply (an Allow
// grants nothing, a Deny denies nothing).
func AllowsAccount(text, account, action, resource string) bool {
	var doc struct {
		Statement OneOrMore[statement]
	}
	if json.Unmarshal([]byte(text), &doc) != nil {
		return false
	}
	allowed := false
	for _, s := range doc.Statement {
		if !s.applies(account, action, resource) {
			continue
		}
		switch s.Effect {
		case "Deny":
			return false
		case "Allow":
			allowed = true
		}
	}
	return allowed
}

type statement struct {
	Effect       string
	Principal    json.RawMessage
	Action       OneOrMore[string]
	Resource     OneOrMore[string]
	Condition    map[string]map[string]OneOrMore[string]
	NotPrincipal json.RawMessage
	NotAction    json.RawMessage
	NotResource  json.RawMessage
}

func (s statement) applies(account, action, resource string) bool {
	if len(s.NotPrincipal) > 0 || len(s.NotAction) > 0 || len(s.NotResource) > 0 {
		return false
	}
	if !principalNames(s.Principal, account) || !anyMatch(s.Action, action, true) {
		return false
	}
	if len(s.Resource) > 0 && !anyMatch(s.Resource, resource, false) {
		return false
	}
	for op, keys := range s.Condition {
		like := false
		switch op {
		case "StringEquals", "ArnEquals":
		case "StringLike", "ArnLike":
			like = true
		default:
			return false
		}
		for key, values := range keys {
			switch strings.ToLower(key) {
			case "aws:sourceowner", "aws:sourceaccount", "aws:principalaccount":
			default:
				return false
			}
			matched := false
			for _, v := range values {
				if like && wildcard(v, account) || !like && v == account {
					matched = true
				}
			}
			if !matched {
				return false
			}
		}
	}
	return true
}

// principalNames reports whether a Principal covers the account.
func principalNames(raw json.RawMessage, account string) bool {
	var star string
	if json.Unmarshal(raw, &star) == nil {
		return star == "*"
	}
	var p struct{ AWS OneOrMore[string] }
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	for _, a := range p.AWS {
		if a == "*" || a == account || a == AccountPrincipal(account) {
			return true
		}
	}
	return false
}

func anyMatch(patterns []string, v string, fold bool) bool {
	for _, p := range patterns {
		if fold && wildcard(strings.ToLower(p), strings.ToLower(v)) || !fold && wildcard(p, v) {
			return true
		}
	}
	return false
}

// wildcard matches IAM's * and ? wildcards; nothing else is special.
func wildcard(pattern, v string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == v
	}
	esc := strings.NewReplacer(`\`, `\\`, `[`, `\[`, "/", "\x00").Replace(pattern)
	ok, err := path.Match(esc, strings.ReplaceAll(v, "/", "\x00"))
	return err == nil && ok
}

// OneOrMore reads a JSON value that may be one item or an array of them,
// as IAM policies write Action, Resource and condition values.
type OneOrMore[T any] []T

func (o *OneOrMore[T]) UnmarshalJSON(b []byte) error {
	var many []T
	if err := json.Unmarshal(b, &many); err == nil {
		*o = many
		return nil
	}
	var one T
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*o = []T{one}
	return nil
}
